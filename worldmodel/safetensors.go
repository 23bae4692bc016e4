package worldmodel

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/memowm/memowm/internal/atomicfile"
)

// Weights as safetensors, the tensor file that PyTorch, JAX and NumPy users
// share. The file, all integers little-endian:
//
//	N        uint64   length of the JSON header
//	header   N bytes of UTF-8 JSON, starting with '{', padded with spaces
//	buffer   the tensors' bytes, each at its data_offsets (relative to the
//	         buffer's start), C order, no holes and no overlaps
//
// The header maps each tensor's name to {"dtype", "shape", "data_offsets":
// [begin, end]}; the key "__metadata__" holds a map of strings.
//
// WriteSafetensors writes one F32 tensor per entry of the layout (params.go),
// in layout order, named by SafetensorsName, with the layout's shapes
// (matrices are (in, out): y = x W, the transpose of a torch.nn.Linear
// weight), so the buffer is Params.Data byte for byte; the header is padded
// so that the buffer starts at a multiple of 8. Its metadata holds the
// configuration as JSON under SafetensorsConfigKey and the format version
// ("1") under SafetensorsVersionKey.
//
// ReadSafetensors accepts the tensors in any order, with any other metadata,
// and in the dtypes F32 (bit for bit), F16 and BF16 (widened to float32,
// exactly) and F64 (rounded to the nearest float32); every value must be
// finite. It refuses a header longer than maxSafetensorsHeader (100 MiB, the
// limit of the reference implementation) or than the file, a header that is
// not a JSON object of the form above (duplicate keys included), a tensor
// that the configuration does not have, one it has that is missing, any
// other dtype, a shape that differs from the configuration's, data_offsets
// whose length is not the shape's bytes, and offsets that overlap, leave a
// hole or go past the file's end.

// Metadata keys that WriteSafetensors writes and ReadSafetensors reads.
const (
	// SafetensorsConfigKey holds the model's Config as JSON (the field
	// names of the weights file).
	SafetensorsConfigKey = "memowm.config"
	// SafetensorsVersionKey holds the version of this tensor naming and
	// layout, "1". A file without it is read as version 1.
	SafetensorsVersionKey = "memowm.format_version"
)

const (
	safetensorsVersion   = "1"
	maxSafetensorsHeader = 100 << 20
)

// SafetensorsName is the name that the layout tensor name has in a
// safetensors file: "layerN/" becomes "layers.N." and every other "/" a
// ".", so "layer3/mlp_w1" is "layers.3.mlp_w1", "action/gru_wx" is
// "action.gru_wx" and "code_embedding" stays "code_embedding".
func SafetensorsName(name string) string {
	if rest, ok := strings.CutPrefix(name, "layer"); ok {
		if i := strings.IndexByte(rest, '/'); i > 0 && isDigits(rest[:i]) {
			name = "layers." + rest[:i] + "." + rest[i+1:]
		}
	}
	return strings.ReplaceAll(name, "/", ".")
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// safetensorsHeader is the JSON header WriteSafetensors writes for m,
// padded with spaces so that 8 + its length is a multiple of 8.
func (m *Model) safetensorsHeader() ([]byte, error) {
	cfg, err := json.Marshal(&m.cfg)
	if err != nil {
		return nil, fmt.Errorf("worldmodel: encoding config: %w", err)
	}
	meta, err := json.Marshal(map[string]string{SafetensorsConfigKey: string(cfg), SafetensorsVersionKey: safetensorsVersion})
	if err != nil {
		return nil, fmt.Errorf("worldmodel: encoding metadata: %w", err)
	}
	var b bytes.Buffer
	b.WriteString(`{"__metadata__":`)
	b.Write(meta)
	for _, t := range m.p.Tensors {
		name, _ := json.Marshal(SafetensorsName(t.Name))
		shape, _ := json.Marshal(t.Shape)
		fmt.Fprintf(&b, `,%s:{"dtype":"F32","shape":%s,"data_offsets":[%d,%d]}`, name, shape, 4*t.Off, 4*(t.Off+t.Size()))
	}
	b.WriteByte('}')
	for (8+b.Len())%8 != 0 {
		b.WriteByte(' ')
	}
	return b.Bytes(), nil
}

// WriteSafetensors writes the model's weights to w as a safetensors file
// (see the format above) and returns the number of bytes written. The same
// model always gives the same bytes.
func (m *Model) WriteSafetensors(w io.Writer) (int64, error) {
	hdr, err := m.safetensorsHeader()
	if err != nil {
		return 0, err
	}
	cw := &countWriter{w: w}
	bw := bufio.NewWriterSize(cw, 1<<16)
	var n8 [8]byte
	binary.LittleEndian.PutUint64(n8[:], uint64(len(hdr)))
	bw.Write(n8[:])
	bw.Write(hdr)
	var buf [4096]byte
	for i := 0; i < len(m.p.Data); i += len(buf) / 4 {
		chunk := m.p.Data[i:min(i+len(buf)/4, len(m.p.Data))]
		for k, v := range chunk {
			binary.LittleEndian.PutUint32(buf[4*k:], math.Float32bits(v))
		}
		bw.Write(buf[:4*len(chunk)])
	}
	if err := bw.Flush(); err != nil {
		return cw.n, fmt.Errorf("worldmodel: writing safetensors: %w", err)
	}
	return cw.n, nil
}

// SaveSafetensors writes the model to path as a safetensors file, through a
// temporary file in the same folder that is renamed when complete.
func (m *Model) SaveSafetensors(path string) error {
	err := atomicfile.Write(path, func(w io.Writer) error {
		_, err := m.WriteSafetensors(w)
		return err
	})
	if err != nil && !strings.HasPrefix(err.Error(), "worldmodel: ") {
		err = fmt.Errorf("worldmodel: %w", err)
	}
	return err
}
