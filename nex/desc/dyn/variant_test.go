package dyn

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gamewire/gamewire/nex/desc"
)

// TestVariants: the variant names come from the descriptions (the Pokémon
// generations included), every game's variant suffix is one of them, and a name
// no description has is refused with the known ones.
func TestVariants(t *testing.T) {
	set, err := desc.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	known := Variants(set)
	for _, want := range []string{"eagle", "mk8", "mk8d", "nx", "pokemon6", "pokemon7", "smm", "smm2"} {
		if !slices.Contains(known, want) {
			t.Errorf("Variants lacks %q: %v", want, known)
		}
	}
	if !slices.IsSorted(known) || len(slices.Compact(slices.Clone(known))) != len(known) {
		t.Errorf("Variants is not sorted and unique: %v", known)
	}
	for game, v := range gameVariants {
		if err := CheckVariant(set, v); err != nil {
			t.Errorf("game %q: its variant: %v", game, err)
		}
	}
	for _, v := range []string{"", "mk8", "MK8D, eagle", "pokemon7", "miitopia_3ds", "mk8d,nx"} {
		if err := CheckVariant(set, v); err != nil {
			t.Errorf("CheckVariant(%q): %v", v, err)
		}
	}
	for _, v := range []string{"nosuch", "mk8,nosuch", "mk9"} {
		err := CheckVariant(set, v)
		if !errors.Is(err, ErrUnknownVariant) || !strings.Contains(err.Error(), "pokemon6") {
			t.Errorf("CheckVariant(%q) = %v, want ErrUnknownVariant with the known names", v, err)
		}
	}
	if err := CheckVariant(set, "mk8,nosuch"); err == nil || !strings.Contains(err.Error(), `"nosuch"`) {
		t.Errorf("CheckVariant does not name the unknown name: %v", err)
	}
}
