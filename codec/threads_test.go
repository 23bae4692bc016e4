package codec

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/worldmodel"
)

// TestThreadsSameBytes writes ten episodes of the many-episode set (mixed
// lossless, mixed lossy, and with slot repeat flags) with 1, 2, 3 and 8
// episodes coded at once: every file has the bytes pinned (before the
// episodes were coded on several goroutines), and decoding each with 1, 2,
// 3 and 8 gives the writer's reconstruction.
func TestThreadsSameBytes(t *testing.T) {
	b, p, eps, _ := manyFixture(t, false)
	eps = eps[:10]
	keep := model.Policy{Kind: model.KeepAll}
	lossy := model.Policy{Kind: model.MinEntropy, MinEntropyQ16: 3 << 15}
	for _, c := range []struct {
		policy model.Policy
		opt    Options
		want   string
	}{
		{keep, Options{Mix: true}, "0b564e537bda7cc25f5d2338b7227106521eeb5e227dc9f81158458e7a598979"},
		{lossy, Options{Mix: true}, "7f689590712014fcd3f60046a4c5aaa1638780319b1957f74599a83cf937e295"},
		{keep, Options{SlotRepeat: true}, "3c21607cfc362de642bf208f01c1b479c6f6d3826e37db35e732c683075bd97b"},
	} {
		var recon [][][]uint8
		for _, threads := range []int{1, 2, 3, 8} {
			path := filepath.Join(t.TempDir(), "t.mwm")
			w, err := CreateWith(path, b, p, c.policy, c.opt)
			if err != nil {
				t.Fatal(err)
			}
			w.KeepRecon, w.Threads = true, threads
			st, err := w.Write(eps)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			d, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprintf("%x", sha256.Sum256(d)); got != c.want {
				t.Fatalf("%v %+v with %d threads: sha256 %s, pinned %s", c.policy.Kind, c.opt, threads, got, c.want)
			}
			if recon == nil {
				for _, s := range st {
					recon = append(recon, s.Recon)
				}
			}
			if threads < 8 {
				continue
			}
			// Every file has the same bytes: decode the last.
			r := openChecked(t, path, b)
			for _, dt := range []int{1, 2, 3, 8} {
				r.Threads = dt
				got, err := r.Decode(p, nil)
				if err != nil {
					t.Fatal(err)
				}
				for i := range eps {
					if !sameCodes(got[i].Codes, recon[i]) || !sameActions(got[i].Actions, eps[i].Actions) {
						t.Fatalf("%+v: episode %d decoded with %d threads differs", c.opt, eps[i].ID, dt)
					}
				}
			}
			r.Close()
		}
	}
}

// TestThreadsFirstError damages the sections of two episodes of a mixed
// file (one late in the stream, one early): decoding with any number of
// threads reports the one a decoder working through the episodes in order
// meets first, and Simulate agrees with the writer whatever its threads.
func TestThreadsFirstError(t *testing.T) {
	b, p, eps, _ := manyFixture(t, false)
	eps = eps[:6]
	keep := model.Policy{Kind: model.KeepAll}
	path, st := encodeFileWith(t, b, p, keep, Options{Mix: true}, eps)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r := openChecked(t, path, b)
	info := r.Episodes()
	r.Close()
	off := int64(headerLen)
	offs := make([]int64, len(info))
	for i, e := range info {
		offs[i] = off
		off += e.Bytes
	}
	// Episode 1: a flipped bit near the end of its stream; episode 4: near
	// the start of its stream. Sections are resealed so that their CRCs
	// hold and the decoder has to find the damage.
	bad := bytes.Clone(data)
	flip := func(i int, at int64) {
		bad[offs[i]+at] ^= 0x10
	}
	flip(1, info[1].Bytes-sectionTail-3)
	flip(4, sectionHead+2)
	var wantErr string
	for _, threads := range []int{1, 2, 3, 8} {
		err := decodeResealed(t, bad, b, p, threads)
		if err == nil {
			t.Fatal("a damaged file decoded")
		}
		if threads == 1 {
			wantErr = err.Error()
			t.Logf("1 thread: %v", err)
			continue
		}
		if err.Error() != wantErr {
			t.Fatalf("%d threads: %v, 1 thread: %s", threads, err, wantErr)
		}
	}
	nb, err := NeighboursOf(b.OPQ)
	if err != nil {
		t.Fatal(err)
	}
	for _, threads := range []int{1, 3} {
		sim, err := SimulateWith(p, keep, eps, SimOptions{Mix: true, Neighbours: nb, Threads: threads})
		if err != nil {
			t.Fatal(err)
		}
		for i := range sim {
			if sim[i].StateBits != st[i].StateBits || !sameCodes(sim[i].Recon, st[i].Recon) {
				t.Fatalf("Simulate with %d threads: episode %d differs from the writer", threads, eps[i].ID)
			}
		}
	}
}

// decodeResealed decodes data, its sections' CRCs recomputed, with threads.
func decodeResealed(t *testing.T, data []byte, b *model.Bundle, p worldmodel.Predictor, threads int) error {
	t.Helper()
	d := bytes.Clone(data)
	r, err := OpenReaderAt(bytes.NewReader(d), int64(len(d)), "damaged")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range r.index {
		sec := d[e.Offset : e.Offset+e.Length]
		binary.LittleEndian.PutUint32(sec[len(sec)-4:], crc32.Checksum(sec[:len(sec)-4], castagnoli))
	}
	if err := r.CheckBundle(b); err != nil {
		t.Fatal(err)
	}
	r.Threads = threads
	_, err = r.Decode(p, nil)
	return err
}
