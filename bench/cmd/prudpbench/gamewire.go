package main

import (
	"context"
	"errors"
)

var errNoEngine = errors.New("gamewire's PRUDP engine is not wired into the benchmark yet")

func serveGamewire(ctx context.Context) (string, error) { return "", errNoEngine }

func dialGamewire(ctx context.Context, addr string) (requester, error) { return nil, errNoEngine }

func dialNexgo(ctx context.Context, addr string) (requester, error) { return nil, errNoEngine }

func bulkGamewire(mb int) (float64, error) { return 0, errNoEngine }

func runIdle(n int) {}
