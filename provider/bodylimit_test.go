package provider_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/provider-ledger/adapter/provider"
)

// tenMiB is the largest answer body the client reads.
const tenMiB = 10 << 20

// paddedParticipant is a participant answer of exactly size bytes, padded
// inside an unknown member so that any truncation breaks the JSON.
func paddedParticipant(size int) string {
	head, tail := `{"participant":{"participantID":"par_1","status":"active","note":"`, `"}}`
	return head + strings.Repeat("x", size-len(head)-len(tail)) + tail
}

func TestAnswerOverTenMiBIsRefusedWhole(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var calls atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		size := tenMiB
		if strings.HasSuffix(r.URL.Path, "/big") {
			size = tenMiB + 1
		}
		_, _ = w.Write([]byte(paddedParticipant(size)))
	}))
	defer ts.Close()
	c, _ := provider.NewClient(ts.URL, provider.WithProviderID("x"), provider.WithRetryPolicy(provider.RetryPolicy{MaxAttempts: 3}))

	p, _, err := c.Participants.Get(ctx, "exact")
	if err != nil || p.ParticipantID != "par_1" {
		t.Fatalf("answer of exactly 10 MiB: %+v %v", p, err)
	}
	calls.Store(0)
	_, _, err = c.Participants.Get(ctx, "big")
	if !errors.Is(err, provider.ErrAnswerTooLarge) {
		t.Fatalf("answer of 10 MiB + 1: got %v, want an answer-too-large error", err)
	}
	if strings.Contains(err.Error(), "unexpected end of JSON input") {
		t.Fatalf("oversized answer surfaced as truncated JSON: %v", err)
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("oversized answer sent %d times; the same answer would come back, so want 1", n)
	}
}

func TestCheckResponseRefusesAnswerOverTenMiB(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		size := tenMiB + 1
		if r.URL.Path == "/ok" {
			size = tenMiB
		}
		_, _ = w.Write([]byte(paddedParticipant(size)))
	}))
	defer ts.Close()
	resp, err := http.Get(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	err = provider.CheckResponse(resp)
	if !errors.Is(err, provider.ErrAnswerTooLarge) {
		t.Fatalf("CheckResponse on 10 MiB + 1: got %v, want an answer-too-large error", err)
	}
	resp, err = http.Get(ts.URL + "/ok")
	if err != nil {
		t.Fatal(err)
	}
	if err := provider.CheckResponse(resp); err != nil {
		t.Fatalf("CheckResponse on a 2xx answer: %v", err)
	}
}
