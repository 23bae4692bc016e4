package entropy_test

import (
	"bytes"
	"fmt"

	"github.com/memowm/memowm/entropy"
)

// The codec's loop on both sides: a table per symbol, known to the decoder
// only once it has decoded the symbols before.
func Example() {
	logits := [][]float32{
		{4, 0, -1, -2}, // a confident model
		{0, 0, 0, 0},   // no idea
		{-3, 5, 0, 1},
	}
	symbols := []int{0, 2, 1}

	enc := entropy.NewEncoder(nil) // whole-buffer form
	var freq, cum []uint32
	for i, l := range logits {
		freq, _ = entropy.QuantizeLogitsTo(freq, l, 16)
		cum = entropy.CumulativeTo(cum, freq)
		if err := enc.EncodeSymbol(symbols[i], cum, 16); err != nil {
			panic(err)
		}
	}
	if err := enc.Close(); err != nil {
		panic(err)
	}
	stream := enc.Bytes()

	dec, err := entropy.NewDecoderBytes(stream)
	if err != nil {
		panic(err)
	}
	for _, l := range logits {
		freq, _ = entropy.QuantizeLogitsTo(freq, l, 16)
		cum = entropy.CumulativeTo(cum, freq)
		s, err := dec.DecodeSymbol(cum, 16)
		if err != nil {
			panic(err)
		}
		fmt.Print(s, " ")
	}
	fmt.Println(dec.Finish())
	fmt.Println(len(stream), "bytes")
	// Output:
	// 0 2 1 <nil>
	// 1 bytes
}

func ExampleQuantizeProbsTo() {
	freq, err := entropy.QuantizeProbsTo(nil, []float32{0.7, 0.2, 0.1, 0}, 8)
	fmt.Println(freq, err)
	fmt.Println("mode", entropy.Mode(freq))
	fmt.Printf("H = %d/65536 bit\n", entropy.EntropyQ16(freq))
	// Output:
	// [178 51 26 1] <nil>
	// mode 0
	// H = 78288/65536 bit
}

func ExampleQuantizeLogitsTo() {
	freq, err := entropy.QuantizeLogitsTo(nil, []float32{0, 1.0986123, -100}, 12)
	fmt.Println(freq, err)
	// Output:
	// [1024 3071 1] <nil>
}

func ExampleCostQ16() {
	// A symbol of frequency 1 in a 24-bit table costs exactly 24 bits.
	fmt.Println(entropy.CostQ16(1, 1<<24) == 24*entropy.FixedOne)
	fmt.Printf("%.4f\n", float64(entropy.CostQ16(3, 4))/entropy.FixedOne)
	// Output:
	// true
	// 0.4150
}

func ExampleDecoder_Target() {
	enc := entropy.NewEncoder(nil)
	enc.Encode(3, 2, 3) // the symbol owning [3, 5) of 8
	enc.Close()

	dec, _ := entropy.NewDecoderBytes(enc.Bytes())
	cum := []uint32{0, 3, 5, 8}
	t, _ := dec.Target(3)
	s := entropy.Lookup(cum, t)
	fmt.Println(s, dec.Consume(cum[s], cum[s+1]-cum[s]), dec.Finish())
	// Output:
	// 1 <nil> <nil>
}

func ExampleNewEncoder_streaming() {
	var out bytes.Buffer
	enc := entropy.NewEncoder(&out)
	bytesModel, _ := entropy.NewAdaptive(256)
	for _, b := range []byte("abracadabra") {
		bytesModel.Encode(enc, int(b))
	}
	enc.Close()

	dec, _ := entropy.NewDecoder(&out)
	decModel, _ := entropy.NewAdaptive(256)
	var got []byte
	for range 11 {
		s, _ := decModel.Decode(dec)
		got = append(got, byte(s))
	}
	fmt.Println(string(got), dec.Finish())
	// Output:
	// abracadabra <nil>
}
