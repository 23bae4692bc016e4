package codec

import (
	"errors"
	"hash/crc32"
	"io"
	"os"
)

const (
	// chunkLen is the size of a streamBuf's chunks in memory.
	chunkLen = 64 << 10
	// memChunks is how many chunks a streamBuf holds in memory before it
	// spills the rest into a file: 1 MiB.
	memChunks = 16
)

// streamBuf keeps one episode's coder stream until its section is written:
// the first memChunks chunks of chunkLen bytes in memory, the rest (a long
// episode's) in an unnamed temporary file in dir, so a stream of any length
// takes at most 1 MiB of memory. With dir "" it holds everything in
// memory; with discard it keeps nothing and only counts (Simulate). It is
// never copied to grow. Close it to remove its file.
type streamBuf struct {
	dir     string
	discard bool

	chunks [][]byte
	n      int
	spill  *os.File // the bytes after the chunks
	named  string   // spill's name while it still has one (removing it failed)
}

func (b *streamBuf) Write(p []byte) (int, error) {
	n := len(p)
	b.n += n
	if b.discard {
		return n, nil
	}
	for len(p) > 0 {
		last := len(b.chunks) - 1
		if last < 0 || len(b.chunks[last]) == chunkLen {
			if b.dir != "" && len(b.chunks) == memChunks {
				break // the rest goes to the file
			}
			b.chunks = append(b.chunks, make([]byte, 0, chunkLen))
			last++
		}
		c := b.chunks[last]
		k := copy(c[len(c):chunkLen], p)
		b.chunks[last] = c[:len(c)+k]
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	if b.spill == nil {
		f, err := os.CreateTemp(b.dir, ".memowm-stream-*")
		if err != nil {
			return 0, err
		}
		b.spill = f
		// Unnamed at once where the system allows it (an open file lives
		// on), so that nothing is left behind whatever happens.
		if os.Remove(f.Name()) != nil {
			b.named = f.Name()
		}
	}
	if _, err := b.spill.Write(p); err != nil {
		return 0, err
	}
	return n, nil
}

// Len is the number of bytes written.
func (b *streamBuf) Len() int { return b.n }

// each calls f with the bytes in order, a piece at a time.
func (b *streamBuf) each(f func([]byte) error) error {
	if b.discard {
		return errors.New("codec: a discarded stream has no bytes")
	}
	for _, c := range b.chunks {
		if err := f(c); err != nil {
			return err
		}
	}
	if b.spill == nil {
		return nil
	}
	buf := make([]byte, chunkLen)
	r := io.NewSectionReader(b.spill, 0, 1<<62)
	for {
		k, err := r.Read(buf)
		if k > 0 {
			if err := f(buf[:k]); err != nil {
				return err
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// WriteTo writes the bytes to w.
func (b *streamBuf) WriteTo(w io.Writer) (int64, error) {
	var n int64
	err := b.each(func(p []byte) error {
		k, err := w.Write(p)
		n += int64(k)
		return err
	})
	return n, err
}

// crc returns crc updated with the bytes (CRC-32C).
func (b *streamBuf) crc(crc uint32) (uint32, error) {
	err := b.each(func(p []byte) error {
		crc = crc32.Update(crc, castagnoli, p)
		return nil
	})
	return crc, err
}

// Close releases the spill file, if any.
func (b *streamBuf) Close() error {
	if b.spill == nil {
		return nil
	}
	err := b.spill.Close()
	if b.named != "" {
		os.Remove(b.named)
	}
	b.spill = nil
	return err
}
