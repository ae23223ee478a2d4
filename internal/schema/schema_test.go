package schema

import "testing"

func TestComponentsOrder(t *testing.T) {
	var r Registry
	r.Register("ranking", "a")
	r.Register("accounts", "b", "c")
	r.Register("datastore", "d")
	var names []string
	for _, c := range r.Components() {
		names = append(names, c.Name)
	}
	if got := names[0] + "," + names[1] + "," + names[2]; got != "accounts,datastore,ranking" {
		t.Fatalf("order %s", got)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("registering a component twice did not panic")
		}
	}()
	r.Register("ranking", "x")
}
