package main

import (
	"fmt"
	"strconv"
	"strings"
)

// perPreset reads a sweep flag that takes one value for every preset
// ("2e-3") or values for presets by name ("base=1e-3,small=2e-3"); value
// parses one value and says what it must be. With all set, every preset
// must be named; otherwise a preset not named is absent from the map. An
// empty s gives an empty map.
func perPreset[T any](flag, s string, presets []string, all bool, value func(string) (T, error)) (map[string]T, error) {
	out := map[string]T{}
	if strings.TrimSpace(s) == "" && !all {
		return out, nil
	}
	one := func(v, what string) (T, error) {
		x, err := value(strings.TrimSpace(v))
		if err != nil {
			return x, fmt.Errorf("%s %s%q is not %w", flag, what, v, err)
		}
		return x, nil
	}
	if !strings.Contains(s, "=") {
		x, err := one(s, "")
		if err != nil {
			return nil, err
		}
		for _, p := range presets {
			out[p] = x
		}
		return out, nil
	}
	want := map[string]bool{}
	for _, p := range presets {
		want[p] = true
	}
	for _, item := range strings.Split(s, ",") {
		name, v, ok := strings.Cut(item, "=")
		name = strings.TrimSpace(name)
		if !ok {
			return nil, fmt.Errorf("%s: %q is not PRESET=VALUE (give one value, or one per preset)", flag, item)
		}
		if !want[name] {
			return nil, fmt.Errorf("%s: %q is not one of the sweep's presets %v", flag, name, presets)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("%s: %s given twice", flag, name)
		}
		x, err := one(v, name+": ")
		if err != nil {
			return nil, err
		}
		out[name] = x
	}
	if all {
		for _, p := range presets {
			if _, ok := out[p]; !ok {
				return nil, fmt.Errorf("%s gives none for preset %s", flag, p)
			}
		}
	}
	return out, nil
}

// parseSweepSteps reads --steps: one count for every preset ("20000"), or
// one per preset ("tiny=20000,small=20000,base=6000"), which must name every
// preset of the sweep and no other.
func parseSweepSteps(s string, presets []string) (map[string]int, error) {
	return perPreset("--steps", s, presets, true, func(v string) (int, error) {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return 0, fmt.Errorf("a positive step count")
		}
		return n, nil
	})
}

// parseSweepLR reads --lr: "" (every preset its own rate), one rate for
// every preset ("1e-3"), or rates for some presets ("base=1e-3,small=2e-3");
// a preset not named is absent from the map (its own rate).
func parseSweepLR(s string, presets []string) (map[string]float64, error) {
	return perPreset("--lr", s, presets, false, func(v string) (float64, error) {
		r, err := strconv.ParseFloat(v, 64)
		if err != nil || !(r > 0 && r < 1) {
			return 0, fmt.Errorf("a learning rate in (0, 1)")
		}
		return r, nil
	})
}

// parseSweepDropout reads --dropout as parseSweepLR reads --lr: rates in
// [0, 1), a preset not named absent (its preset's).
func parseSweepDropout(s string, presets []string) (map[string]float64, error) {
	return perPreset("--dropout", s, presets, false, func(v string) (float64, error) {
		r, err := strconv.ParseFloat(v, 64)
		if err != nil || !(r >= 0 && r < 1) {
			return 0, fmt.Errorf("a dropout rate in [0, 1)")
		}
		return r, nil
	})
}
