package worldmodel

// Model is a world model: a configuration and its weights. It is immutable
// once built (New, Read, Load) and safe for concurrent use; inference runs
// through a CPU, which holds the buffers.
type Model struct {
	cfg Config
	p   *Params
}

// New returns a model with the configuration's architecture and random
// weights drawn from seed (see Params for the scheme): the same seed gives
// the same bits on every architecture. The error wraps ErrConfig or
// ErrProfile.
func New(cfg Config, seed uint64) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p := newParams(&cfg)
	p.initRandom(seed)
	return &Model{cfg: cfg, p: p}, nil
}

// Config returns the model's configuration.
func (m *Model) Config() Config { return m.cfg }

// Params returns the model's weights. They alias the model: a caller that
// changes them (training, tests) must not run inference at the same time.
func (m *Model) Params() *Params { return m.p }

// Tensor returns the named tensor's values (aliasing the model) and shape,
// or nil if there is no such tensor.
func (m *Model) Tensor(name string) ([]float32, []int) {
	for i := range m.p.Tensors {
		t := &m.p.Tensors[i]
		if t.Name == name {
			return m.p.Data[t.Off : t.Off+t.Size()], t.Shape
		}
	}
	return nil, nil
}
