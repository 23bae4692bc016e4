package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// ExternalTool is a general-purpose compressor command that bench looked
// for on PATH (Options.External): where it was found, its version, and the
// rows it ran; or, when it was not found or does not run, why its rows are
// missing.
type ExternalTool struct {
	Command string   `json:"command"`                // xz, zstd
	Found   bool     `json:"found"`                  // found on PATH and its --version ran
	Path    string   `json:"command_path,omitempty"` // where it was found
	Version string   `json:"version,omitempty"`      // the first line of 'COMMAND --version'
	Rows    []string `json:"rows"`                   // the rows it ran, or would have run
	Note    string   `json:"note,omitempty"`         // why it did not run
}

// externalRow is one row run by an external command: the arguments that
// compress stdin to stdout and those that decompress it back.
type externalRow struct {
	row, command string
	enc, dec     []string
	note         string
	// sized: the compressor is told the episode's length
	// (--stream-size=BYTES), as it knows a file's; zstd then writes the same
	// bytes as on a file holding the episode, and sizes its tables to it
	// (at level 22 with no size it clears hundreds of MiB of tables per
	// process: about 2 s for a 4.6 KB episode).
	sized bool
}

// zstdLongWindow is the window of zstd's --long (its documented default,
// --long=27: 128 MiB). Larger windows need the same --long=N (or a larger
// --memory) on decompression; 128 MiB already holds any episode up to that
// size whole.
const zstdLongWindow = 27

// externalRows are the rows of the external commands, in report order.
// Every command runs on one thread (xz -T1 is xz's single-threaded mode;
// zstd -T1 one compression thread beside the I/O) with stdin and stdout.
var externalRows = []externalRow{
	{row: "xz-9e", command: "xz", enc: []string{"-9e", "-c", "-T1"}, dec: []string{"-dc", "-T1"},
		note: "preset 9 extreme (LZMA2, 64 MiB dictionary, binary-tree match finder, optimal parse), single-threaded; the .xz container is counted (stream header and footer, block header, index, CRC64 check: about 60 bytes per episode)"},
	{row: "zstd-19-long", command: "zstd", enc: []string{"-19", fmt.Sprintf("--long=%d", zstdLongWindow), "-T1", "-c"}, dec: []string{"-dc", fmt.Sprintf("--long=%d", zstdLongWindow)}, sized: true,
		note: "level 19, long-distance matching with a 128 MiB window (--long's default, 27), one thread, told the episode's length (--stream-size: the same bytes as on a file); the zstd frame is counted (header with the content size, XXH64 check)"},
	{row: "zstd-22-long", command: "zstd", enc: []string{"--ultra", "-22", fmt.Sprintf("--long=%d", zstdLongWindow), "-T1", "-c"}, dec: []string{"-dc", fmt.Sprintf("--long=%d", zstdLongWindow)}, sized: true,
		note: "level 22 (--ultra), long-distance matching with a 128 MiB window (--long's default, 27), one thread, told the episode's length (--stream-size: the same bytes as on a file); the zstd frame is counted (header with the content size, XXH64 check)"},
}

// encArgs are e's arguments that compress n bytes.
func (e externalRow) encArgs(n int) []string {
	args := append([]string(nil), e.enc...)
	if e.sized {
		args = append(args, fmt.Sprintf("--stream-size=%d", n))
	}
	return args
}

// inProcessRows are the general-purpose rows computed in this process.
var inProcessRows = []string{"zstd", "zstd-long", "xz"}

// IsGeneral reports whether name is a general-purpose compressor row (in
// process or external), of which best-general is the smallest.
func IsGeneral(name string) bool {
	for _, n := range inProcessRows {
		if n == name {
			return true
		}
	}
	for _, e := range externalRows {
		if e.row == name {
			return true
		}
	}
	return false
}

// externalEnv is the environment of the external commands: this process's
// without the variables that would add options to them (XZ_DEFAULTS,
// XZ_OPT, ZSTD_CLEVEL, ZSTD_NBTHREADS), so that every row runs with exactly
// the options it names.
func externalEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "XZ_DEFAULTS", "XZ_OPT", "ZSTD_CLEVEL", "ZSTD_NBTHREADS":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// runCommand runs path with args, in on stdin, and returns its stdout. A
// non-zero status or anything on stderr is an error that quotes stderr.
func runCommand(ctx context.Context, path string, args []string, in []byte) ([]byte, error) {
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = externalEnv()
	cmd.Stdin = bytes.NewReader(in)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err == nil && errb.Len() > 0 {
		err = fmt.Errorf("wrote to stderr")
	}
	if err != nil {
		if msg := strings.TrimSpace(errb.String()); msg != "" {
			err = fmt.Errorf("%w: %s", err, msg)
		}
		return nil, fmt.Errorf("'%s %s': %w", path, strings.Join(args, " "), err)
	}
	return out.Bytes(), nil
}

// findExternal looks for every external command on PATH and asks each found
// one its version. A command that is missing, or whose --version fails, is
// reported with a note and its rows skipped: never an error.
func findExternal(ctx context.Context) []ExternalTool {
	var tools []ExternalTool
	for _, e := range externalRows {
		if len(tools) > 0 && tools[len(tools)-1].Command == e.command {
			t := &tools[len(tools)-1]
			t.Rows = append(t.Rows, e.row)
			continue
		}
		t := ExternalTool{Command: e.command, Rows: []string{e.row}}
		path, err := exec.LookPath(e.command)
		switch {
		case err != nil:
			t.Note = "not found on PATH"
		default:
			t.Path = path
			v, err := runCommand(ctx, path, []string{"--version"}, nil)
			if err != nil {
				t.Note = fmt.Sprintf("found at %s, but %v", path, err)
				break
			}
			t.Found = true
			first, _, _ := strings.Cut(strings.TrimSpace(string(v)), "\n")
			t.Version = strings.TrimSpace(first)
		}
		tools = append(tools, t)
	}
	return tools
}

// externalCompressors are the compressors of the rows of the found tools.
func externalCompressors(ctx context.Context, tools []ExternalTool) []compressor {
	var cs []compressor
	for _, e := range externalRows {
		for _, t := range tools {
			if t.Command != e.command || !t.Found {
				continue
			}
			path, e := t.Path, e
			shown := strings.Join(e.enc, " ")
			if e.sized {
				shown += " --stream-size=BYTES"
			}
			cs = append(cs, compressor{name: e.row,
				note: fmt.Sprintf("the %s command, '%s %s' on stdin and stdout: %s; per episode, a process each way (speeds include starting it)",
					e.command, e.command, shown, e.note),
				enc:     func(b []byte) ([]byte, error) { return runCommand(ctx, path, e.encArgs(len(b)), b) },
				dec:     func(b []byte) ([]byte, error) { return runCommand(ctx, path, e.dec, b) },
				close:   func() {},
				counted: true,
			})
		}
	}
	return cs
}
