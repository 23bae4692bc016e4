package ptx

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// clangArgs is the command that produced testdata/*.ptx (see generate.go).
var clangArgs = []string{"--cuda-device-only", "-nocudainc", "-nocudalib", "--cuda-gpu-arch=sm_80", "-O3", "-S"}

// TestPTXUpToDate recompiles every testdata/*.cu with clang-14 and checks the
// committed .ptx is byte for byte what clang produces. Without clang-14 it
// skips, unless MEMOWM_CLANG=1 demands it.
func TestPTXUpToDate(t *testing.T) {
	clang, err := exec.LookPath("clang-14")
	if err != nil {
		if os.Getenv("MEMOWM_CLANG") == "1" {
			t.Fatal("MEMOWM_CLANG=1 but clang-14 is not installed")
		}
		t.Skip("clang-14 not installed; set MEMOWM_CLANG=1 to require it")
	}
	srcs, err := filepath.Glob(filepath.Join("testdata", "*.cu"))
	if err != nil || len(srcs) == 0 {
		t.Fatalf("no testdata/*.cu: %v", err)
	}
	dir := t.TempDir()
	for _, src := range srcs {
		t.Run(filepath.Base(src), func(t *testing.T) {
			t.Parallel()
			base := strings.TrimSuffix(filepath.Base(src), ".cu")
			out := filepath.Join(dir, base+".ptx")
			args := append(append([]string{}, clangArgs...), "-o", out, src)
			if msg, err := exec.Command(clang, args...).CombinedOutput(); err != nil {
				t.Fatalf("clang-14 %s: %v\n%s", src, err, msg)
			}
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join("testdata", base+".ptx"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("testdata/%s.ptx is stale: run go generate ./internal/ptx/", base)
			}
			if _, err := Parse(string(got)); err != nil {
				t.Errorf("%s: %v", base, err)
			}
		})
	}
}
