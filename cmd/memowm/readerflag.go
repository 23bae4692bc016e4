package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/reader"
)

const readerHelp = "measure answer loss with this external reader, an HTTP URL (protocol:\n" +
	"docs/reader-protocol.md; reader/reference/server.py is a worked example) instead\n" +
	"of the bundle's built-in probe"

// readerFlags are --reader and how to talk to it.
type readerFlags struct {
	url     *string
	timeout *time.Duration
	batch   *int
}

// readerFlag adds --reader, --reader-timeout and --reader-batch to fs.
func readerFlag(fs *flag.FlagSet) *readerFlags {
	return &readerFlags{
		url:     fs.String("reader", "", readerHelp),
		timeout: fs.Duration("reader-timeout", 30*time.Second, "with --reader, the time one request may take (a whole batch), before retries"),
		batch:   fs.Int("reader-batch", reader.DefaultBatch, fmt.Sprintf("with --reader, questions per request (1: protocol version 1, one per request; at most %d)", reader.MaxBatch)),
	}
}

// args are the flags again, for a stage run by another (fit --stage all).
func (rf *readerFlags) args() []string {
	return []string{"--reader", *rf.url, "--reader-timeout", rf.timeout.String(), "--reader-batch", fmt.Sprint(*rf.batch)}
}

// scorerOf returns the reader that measures answer loss for b: the
// external reader at url, else the bundle's probe (an error naming the
// stage to run when it has none). name is what a policy records: the
// external reader's name, "" for the probe.
func scorerOf(b *model.Bundle, rf *readerFlags) (r reader.Reader, name string, err error) {
	url := *rf.url
	if url == "" {
		if b.Reader == nil {
			return nil, "", fmt.Errorf("the bundle has no reader: run 'memowm fit --stage reader' first, or give --reader URL")
		}
		return b.Reader, "", nil
	}
	s := b.OPQ.Shape()
	if *rf.timeout <= 0 {
		return nil, "", usagef("--reader-timeout %v must be positive", *rf.timeout)
	}
	h, err := reader.NewHTTP(url, reader.WithShape(s.Slots, s.Dim), reader.WithTimeout(*rf.timeout), reader.WithBatch(*rf.batch))
	if err != nil {
		return nil, "", usagef("--reader: %v", err)
	}
	return h, h.Name(), nil
}
