package web

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/memowm/memowm/recording"
)

// memSink keeps a recording in memory.
type memSink struct {
	pngs    [][]byte
	facts   []map[string]any
	actions []recording.Action
	timings []map[string]any
}

func (m *memSink) AddPNG(png []byte, facts map[string]any) error {
	m.pngs = append(m.pngs, png)
	m.facts = append(m.facts, facts)
	return nil
}
func (m *memSink) AddAction(a recording.Action) error { m.actions = append(m.actions, a); return nil }
func (m *memSink) AddTiming(t map[string]any) error   { m.timings = append(m.timings, t); return nil }

func needChromium(t *testing.T) {
	t.Helper()
	if _, err := FindChromium(""); err != nil {
		t.Skip("chromium is not installed (apt-get install chromium): skipping the browser test")
	}
}

func TestRecordTinySite(t *testing.T) {
	needChromium(t)
	var sink memSink
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := Record(ctx, Config{Site: "testdata/site", Steps: 12, Seed: 1, Width: 320, Height: 200, Log: t.Logf}, &sink)
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range sink.actions {
		j, _ := json.Marshal(a)
		f, _ := json.Marshal(sink.facts[i+1])
		t.Logf("%2d %s -> %s %v", i, j, f, sink.timings[i])
	}
	t.Logf("%+v", res)
}
