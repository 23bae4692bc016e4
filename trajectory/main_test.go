package trajectory

import (
	"flag"
	"testing"
)

// TestMain bounds the fuzzer's minimisation of each new input to 50 runs
// unless -fuzzminimizetime is given: arrow-go and parquet are large, nearly
// every early input finds new coverage, and the default (60 s each) left the
// fuzzers minimising instead of running (66 executions in 120 s).
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.fuzzminimizetime" })
	if !set {
		flag.Set("test.fuzzminimizetime", "50x")
	}
	m.Run()
}
