// Package worldmodel is memowm's action-conditioned world model: the shared
// predictive prior that writer and decoder both run. Given the reconstructed
// history of at most 16 states (1,024 OPQ codes each) and the actions between
// them, it predicts a distribution over the 64 codewords of each of the 1,024
// coordinates of the next state.
//
// # Overview
//
// The architecture follows the paper (appendix A.2) and its reference
// implementation tensor for tensor (params.go lists them; the paper preset has
// exactly the reference's 29,092,096 parameters):
//
//   - a token per (time block k, slot s): the 32 subspace codes' 8-dim
//     embeddings concatenated (width 256), plus a slot-validity embedding, the
//     action embedding of the block, a task embedding, the time embedding of
//     the block's position in the left-padded window, and the slot embedding;
//   - the action encoder: type, x-bin and y-bin embeddings (64 bins and a
//     "missing" bin), a linear map of [slog dx, slog dy, has-delta], and a
//     byte GRU over the payload, concatenated and projected to the width. Step
//     k's action is the one taken from state k, so the last step carries
//     u_{t-1};
//   - a pre-LayerNorm Transformer (GELU MLP, tanh form) whose attention is
//     causal across blocks and full among the slots of a block;
//   - a final LayerNorm; the last block's slot states, cut into 8-dim slices,
//     give logits tied to the code embeddings plus a bias, and a copy gate
//     that mixes in the previous state's code:
//     p(c) = a 1[c = prev] + (1 - a) softmax(l)(c);
//   - a validity head on the mean of the last block's slot states.
//
// Presets (Preset, PresetNames): tiny (0.17M parameters, tests), small
// (0.97M), base (5.4M), medium (10.2M) and paper (29.1M); all use the paper's
// state interface, so they span the capacity sweep over the same codes.
//
// Inference runs through a backend. CPU (forward.go) is the reference: pure
// Go with internal/f32's matrix kernels and this package's own elementary
// functions (mathf.go), AVX-512 where the machine has it. Downstream code sees
// the Predictor interface, which returns integer frequency tables (through
// the entropy package's bridge), modes and fixed-point entropies; the float
// path (CPU.Forward, Output.ProbsTo) is for training and tests.
//
// Weights are stored in a versioned, checksummed file (weights.go) that a
// model bundle can embed; New builds a randomly initialised model from a seed.
//
// # Training
//
// Trainer (train.go) trains a model in place on Sequences of true codes,
// read through a Corpus (corpus.go) a window at a time: Seqs in memory, or
// package corpus's file, which gives the same weights bit for bit in
// bounded memory. Every transition is one example, its window of at most 16 states and
// actions predicting the next state. The loss (loss.go) is the next state's
// code length in bits with the copy gate, plus the slot-validity BCE. The
// training forward (tape.go) is forward.go's, with the same layer functions,
// keeping its activations; each layer's backward sits in grad_layers.go and
// grad_action.go, and tests check every parameter's gradient by finite
// differences of the float64 reference transcription. AdamW with warm-up and
// cosine decay and a gradient-norm cap (adamw.go), dropout on the embedded
// tokens and both residual branches, a seeded data order, and checkpoints
// (checkpoint.go) that resume a run bit for bit. With held-out data, Run can
// end on the weights of its lowest evaluation (RunConfig.KeepBest, or
// Patience, which also stops on a plateau); its checkpoints carry them.
// Training is deterministic for a seed on one machine and build, whatever
// the thread count (parallel work splits outputs or fixed chunks, never a
// sum by thread); it is not part of the f32 profile (the weights it writes
// are).
//
// # The int8 profile
//
// CalibrateInt8 converts a model to integer inference (int8.go): int8
// matrices with a scale per output column, activations quantized to int8
// with scales from the largest magnitudes the f32 model reaches on
// calibration histories, int32 accumulation (internal/igemm: AVX-512 VNNI,
// AVX2 or Go, all exact), requantisation by fixed-point multipliers, an
// integer LayerNorm with an integer square root, GELU by table, the
// attention softmax and copy gate by exponential and sigmoid tables, an
// int16 head with int64 logits, and an integer frequency table
// (int8_ops.go states every rule). Int8CPU runs it; the Int8Model's file
// (int8_file.go) is a part of a version-2 bundle. The input tokens are the
// f32 profile's (exact on every machine), rounded to the residual's fixed
// point.
//
// # Invariants
//
//   - Profile "int8": the tables are integers computed by the rules of
//     int8_ops.go; no sum can overflow its type, so their order does not
//     matter, and threads, batches, SIMD kernels and architectures give the
//     same bits (TestInt8Exact, testdata/golden_int8.txt).
//   - Profile "f32": for the same weights and histories, Forward and Predict
//     give the same bits for any batch composition, thread count and
//     architecture. Every dot product is summed left to right with each
//     product rounded on its own (internal/f32; explicit float32 conversions
//     elsewhere, so no fused multiply-add); parallel work splits outputs
//     (columns, rows, heads, histories), never a sum; exp, tanh and log are
//     this package's, built from + - * / and IEEE square roots; SIMD kernels
//     reproduce the Go code lane by lane and tests compare them bit for bit.
//     testdata/golden_tiny.json pins the bits; the same file passes on arm64
//     (qemu-aarch64).
//   - A prediction depends only on its own history: padding blocks are not
//     computed, and attention never reads a later block.
//   - Every table of a Prediction has all entries >= 1 and totals exactly
//     1 << Precision(); Mode is its lowest-index argmax.
//   - The same seed gives the same random weights on every architecture.
//   - Read and ReadSafetensors never panic: damaged input gives errors
//     wrapping the sentinels in errors.go. A safetensors export holds
//     Params.Data byte for byte, one F32 tensor per layout entry named by
//     SafetensorsName, the Config in its metadata.
//
// # Aliasing
//
// Model is immutable after construction and may be shared, except by a
// Trainer, which updates its weights in place; Params and Tensor alias it. A CPU owns buffers that Forward and Predict reuse, so one CPU
// serves one goroutine at a time; Outputs and Predictions passed as dst are
// reused.
package worldmodel
