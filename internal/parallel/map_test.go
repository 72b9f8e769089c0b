package parallel

import (
	"errors"
	"slices"
	"testing"
)

// TestMap: each call's result at its index, every error joined.
func TestMap(t *testing.T) {
	odd := errors.New("odd")
	got, err := Map(3, 6, func(i int) (int, error) {
		if i == 5 {
			return -1, odd
		}
		return i * i, nil
	})
	if !errors.Is(err, odd) || !slices.Equal(got, []int{0, 1, 4, 9, 16, -1}) {
		t.Errorf("Map = %v, %v; want the squares by index and the error", got, err)
	}
	if got, err := Map(2, 0, func(int) (string, error) { return "x", odd }); err != nil || len(got) != 0 {
		t.Errorf("Map over nothing = %v, %v", got, err)
	}
}
