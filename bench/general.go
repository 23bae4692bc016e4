package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz/lzma"

	"github.com/memowm/memowm/codec"
	"github.com/memowm/memowm/trajectory"
)

// BestGeneral names the row that copies the smallest general-purpose row.
const BestGeneral = "best-general"

// compressor is one general-purpose lossless coder applied to each
// episode's packed codes on its own.
type compressor struct {
	name, note string
	enc        func([]byte) ([]byte, error)
	dec        func([]byte) ([]byte, error)
	close      func()
	counted    bool // the note ends with the bytes it produced
}

// packEpisodes packs each episode's codes at bits per code: the bytes every
// general-purpose row compresses.
func packEpisodes(eps []*trajectory.Episode, bits int) (raw [][]byte, obs int) {
	for _, ep := range eps {
		var b []byte
		for _, z := range ep.Codes {
			b = codec.PackCodes(b, z, bits)
		}
		raw = append(raw, b)
		obs += len(ep.Codes)
	}
	return raw, obs
}

// generalRows runs zstd, zstd-long and xz on the packed episodes, then,
// with tools, the rows of the external commands found among them (on the
// same packed bytes, one episode at a time); progress is called before
// each.
func generalRows(ctx context.Context, eps []*trajectory.Episode, bits int, actions float64, tools []ExternalTool, progress func(string)) ([]Row, error) {
	raw, obs := packEpisodes(eps, bits)
	longest := 0
	for _, b := range raw {
		longest = max(longest, len(b))
	}
	makers := []func(int) (compressor, error){
		func(int) (compressor, error) { return newZstd("zstd", 0) },
		func(n int) (compressor, error) { return newZstd("zstd-long", n) },
		newXZ,
	}
	for _, c := range externalCompressors(ctx, tools) {
		if strings.HasPrefix(c.name, "zstd") && longest > 1<<zstdLongWindow {
			c.note += fmt.Sprintf("; the longest episode (%s) is longer than the window: matches further back are cut", size(longest))
		}
		makers = append(makers, func(int) (compressor, error) { return c, nil })
	}
	var rows []Row
	for _, mk := range makers {
		c, err := mk(longest)
		if err != nil {
			return nil, err
		}
		progress(c.name)
		row, err := generalRow(c, eps, raw, obs, actions)
		c.close()
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// generalRow times c over every episode and checks that each decodes back
// to its exact bytes. Bits per observation are the compressed bytes times 8
// plus the action cost every row is charged.
func generalRow(c compressor, eps []*trajectory.Episode, raw [][]byte, obs int, actions float64) (Row, error) {
	start := time.Now()
	comp := make([][]byte, len(raw))
	total := 0
	for i, b := range raw {
		out, err := c.enc(b)
		if err != nil {
			return Row{}, fmt.Errorf("bench: %s on episode %d: %w", c.name, eps[i].ID, err)
		}
		comp[i] = out
		total += len(out)
	}
	encT := time.Since(start)
	start = time.Now()
	for i, b := range comp {
		d, err := c.dec(b)
		if err != nil || !bytes.Equal(d, raw[i]) {
			return Row{}, fmt.Errorf("bench: %s round trip of episode %d failed: %v", c.name, eps[i].ID, err)
		}
	}
	decT := time.Since(start)
	o := float64(max(obs, 1))
	bpo := float64(total*8)/o + actions
	zero := 0.0
	if c.counted {
		c.note += fmt.Sprintf("; %d bytes for %d episodes", total, len(raw))
	}
	return Row{Name: c.name, BitsPerObs: bpo, IdealBitsPerObs: bpo, ActionBitsPerObs: actions, DeltaNLLBits: &zero,
		KeptFraction: 1, EncodeObsPerS: o / encT.Seconds(), DecodeObsPerS: o / decT.Seconds(), Note: c.note}, nil
}

// zstdDefaultWindow is klauspost/compress's window at its best level.
const zstdDefaultWindow = 8 << 20

// newZstd is klauspost/compress zstd at its best level. With longest > 0
// the window is the smallest power of two holding the longest episode
// (clamped to the library's range): each episode is compressed alone, so no
// match reaches further back than its start, and this window cuts no match
// the library's largest (zstd.MaxWindowSize, 512 MiB) would find (the
// output is the same bytes: checked on a 10 MB episode and a 384 KB one),
// without allocating twice that for its history. The library has no
// long-distance-matching mode.
func newZstd(name string, longest int) (compressor, error) {
	opts := []zstd.EOption{zstd.WithEncoderLevel(zstd.SpeedBestCompression), zstd.WithEncoderConcurrency(1)}
	note := "best level, per episode"
	if longest > 0 {
		w := zstd.MinWindowSize
		for w < longest && w < zstd.MaxWindowSize {
			w *= 2
		}
		opts = append(opts, zstd.WithWindowSize(w))
		note = fmt.Sprintf("best level, window %s: holds the longest episode, so no match is cut, as with the library's largest (512 MiB; it has no long-distance matching), per episode", size(w))
		if longest <= zstdDefaultWindow {
			note += "; same output as zstd here: no episode is longer than its default 8 MiB window"
		}
	}
	enc, err := zstd.NewWriter(nil, opts...)
	if err != nil {
		return compressor{}, fmt.Errorf("bench: %w", err)
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(zstd.MaxWindowSize))
	if err != nil {
		enc.Close()
		return compressor{}, fmt.Errorf("bench: %w", err)
	}
	return compressor{name: name, note: note,
		enc:   func(b []byte) ([]byte, error) { return enc.EncodeAll(b, nil), nil },
		dec:   func(b []byte) ([]byte, error) { return dec.DecodeAll(b, nil) },
		close: func() { enc.Close(); dec.Close() },
	}, nil
}

// newXZ is LZMA2 from github.com/ulikunitz/xz at its strongest settings:
// a dictionary as long as the longest episode (no larger one can help an
// episode compressed alone) and the hash-table match finder HashTable4, the
// library's default. Its other finder, BinaryTree, is an unbalanced tree
// keyed on 4-byte words: on runs of equal words it takes quadratic time
// (64 KiB of one byte: about 4 s), and on packed codes it found fewer
// matches (NetHack codes: 14 times larger output, over 1000 times slower;
// the sim demo's: no smaller than the input). The parse is greedy (no
// optimal parsing as in xz -9). Literal properties are xz's defaults. The
// stream is raw LZMA2 with its end marker; the xz container would add about
// 50 bytes per episode of headers, index and footer.
func newXZ(longest int) (compressor, error) {
	dict := int(min(int64(max(longest, lzma.MinDictCap)), lzma.MaxDictCap))
	props := lzma.Properties{LC: 3, LP: 0, PB: 2}
	cfg := lzma.Writer2Config{Properties: &props, DictCap: dict, Matcher: lzma.HashTable4}
	if err := cfg.Verify(); err != nil {
		return compressor{}, fmt.Errorf("bench: %w", err)
	}
	rcfg := lzma.Reader2Config{DictCap: dict}
	return compressor{name: "xz",
		note: fmt.Sprintf("LZMA2 (pure-Go ulikunitz/xz: greedy parse; raw stream, no xz container), dictionary %s (the longest episode), HashTable4 match finder (its binary tree is weaker and quadratic on runs), %s, per episode", size(dict), props.String()),
		enc: func(b []byte) ([]byte, error) {
			var buf bytes.Buffer
			w, err := cfg.NewWriter2(&buf)
			if err != nil {
				return nil, err
			}
			if _, err := w.Write(b); err != nil {
				return nil, err
			}
			if err := w.Close(); err != nil {
				return nil, err
			}
			return buf.Bytes(), nil
		},
		dec: func(b []byte) ([]byte, error) {
			r, err := rcfg.NewReader2(bytes.NewReader(b))
			if err != nil {
				return nil, err
			}
			return io.ReadAll(r)
		},
		close: func() {},
	}, nil
}

// bestGeneral is a copy of the general-purpose row with the fewest bits per
// observation (the first on a tie: an in-process row before an external
// one), named BestGeneral.
func bestGeneral(rows []Row) Row {
	best := rows[0]
	for _, r := range rows[1:] {
		if r.BitsPerObs < best.BitsPerObs {
			best = r
		}
	}
	from := best.Name
	best.Name = BestGeneral
	best.Note = fmt.Sprintf("%s, the smallest of the general-purpose rows here", from)
	return best
}

// setRatios gives every row its ratios to fixed-width and best-general.
func setRatios(rows []Row, fixed float64) error {
	bestBits := 0.0
	for _, r := range rows {
		if r.Name == BestGeneral {
			bestBits = r.BitsPerObs
		}
	}
	if bestBits <= 0 {
		return fmt.Errorf("bench: no %s row to compare with", BestGeneral)
	}
	for i := range rows {
		rows[i].RatioFixedWidth = rows[i].BitsPerObs / fixed
		rows[i].RatioBestGeneral = rows[i].BitsPerObs / bestBits
	}
	return nil
}

// size writes n bytes in KiB or MiB.
func size(n int) string {
	switch {
	case n >= 1<<20:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/(1<<20)), ".0") + " MiB"
	case n >= 1<<10:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/(1<<10)), ".0") + " KiB"
	}
	return fmt.Sprintf("%d bytes", n)
}
