package main

import (
	"flag"
	"fmt"

	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/reader"
)

const readerHelp = "measure answer loss with this external reader, an HTTP URL (protocol:\n" +
	"docs/reader-protocol.md; reader/reference/server.py is a worked example) instead\n" +
	"of the bundle's built-in probe"

// readerFlag adds --reader to fs.
func readerFlag(fs *flag.FlagSet) *string { return fs.String("reader", "", readerHelp) }

// scorerOf returns the reader that measures answer loss for b: the
// external reader at url, else the bundle's probe (an error naming the
// stage to run when it has none). name is what a policy records: the
// external reader's name, "" for the probe.
func scorerOf(b *model.Bundle, url string) (r reader.Reader, name string, err error) {
	if url == "" {
		if b.Reader == nil {
			return nil, "", fmt.Errorf("the bundle has no reader: run 'memowm fit --stage reader' first, or give --reader URL")
		}
		return b.Reader, "", nil
	}
	s := b.OPQ.Shape()
	h, err := reader.NewHTTP(url, reader.WithShape(s.Slots, s.Dim))
	if err != nil {
		return nil, "", usagef("--reader: %v", err)
	}
	return h, h.Name(), nil
}
