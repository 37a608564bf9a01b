package callbacks_test

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/callbacks/caller"
	"github.com/provider-ledger/adapter/callbacks/claims"

	"github.com/provider-ledger/adapter/store/storetest"
)

// TestConcurrentSameKeys: 200 goroutines send 50 distinct keys, each 4
// times at once, across the four endpoints: exactly 50 effects, identical
// answers per key, and I1..I6 hold. Run on one adapter instance and on two
// instances sharing one database, each without and with group commit (two
// lanes, so that copies of one key meet in one batch and in two).
func TestConcurrentSameKeys(t *testing.T) {
	t.Parallel()
	for _, instances := range []int{1, 2} {
		for _, group := range []int{0, 2} {
			t.Run(fmt.Sprintf("instances=%d/group=%d", instances, group), func(t *testing.T) {
				t.Parallel()
				sameKeysOnInstances(t, instances, group)
			})
		}
	}
}

// sameKeyJob is one callback TestConcurrentSameKeys sends four times.
type sameKeyJob struct {
	endpoint string
	claims   any
}

// sameKeyJobs places 20 holds of 1.00 on cc-src and returns 50 jobs: 20
// authorizations of 2.00, the capture of ten of those holds and the
// release of the ten others, and ten credits of 3.00 to cc-dst.
func sameKeyJobs(t *testing.T, b *bundle) []sameKeyJob {
	t.Helper()
	// 20 holds placed beforehand, to be captured (10) and released (10).
	pre := make([]string, 20)
	for i := range pre {
		r := b.send(t, claims.Authorize, authorizeClaims(fmt.Sprintf("pre-%d", i), "pre", "alice", "src-cc", "1.00", 0))
		if r.Outcome() != "approved" {
			t.Fatal(r.Service)
		}
		pre[i] = r.Str("holdReference")
	}
	var jobs []sameKeyJob
	for i := range 20 { // 20 new authorizations of 2.00
		jobs = append(jobs, sameKeyJob{claims.Authorize, authorizeClaims(fmt.Sprintf("new-%d", i), fmt.Sprintf("ka-%d", i), "alice", "src-cc", "2.00", 0)})
	}
	for i := range 10 {
		jobs = append(jobs, sameKeyJob{claims.Capture, captureClaims(fmt.Sprintf("pre-%d", i), fmt.Sprintf("kc-%d", i), pre[i])})
		jobs = append(jobs, sameKeyJob{claims.Release, releaseClaims(fmt.Sprintf("pre-%d", 10+i), fmt.Sprintf("kr-%d", i), pre[10+i])})
		jobs = append(jobs, sameKeyJob{claims.CreditAccount, creditClaims(fmt.Sprintf("req-%d", i), fmt.Sprintf("kd-%d", i), "bob", "dst-cc", "3.00")})
	}
	return jobs
}

// sameKeysOnInstances sends every job four times at once, spread over
// instances adapters on one database: each is decided once, every copy
// answers the same, and the money moves once.
func sameKeysOnInstances(t *testing.T, instances, group int) {
	// The in-flight limit and the request deadline are raised so that
	// every copy is in flight at once and none times out while 40
	// transactions queue on one account of a loaded machine: this test
	// is about duplicates, not load shedding (a 408 here would mean a
	// request hung).
	b := setup(t, opts{maxInflight: 1000, requestTimeout: 30 * time.Second, groupCommit: group})
	nodes := []*bundle{b}
	if instances == 2 {
		// A second adapter: its own pool, keyring and listener, one database.
		other := setup(t, opts{pool: b.pool, key: &b.key, maxInflight: 1000, requestTimeout: 30 * time.Second, groupCommit: group})
		nodes = append(nodes, other)
	}
	ctx := context.Background()
	b.account(t, storetest.AccountOpts{AccountID: "cc-src", Owner: "alice", Funds: "1000", Source: "src-cc"})
	b.account(t, storetest.AccountOpts{AccountID: "cc-dst", Owner: "bob", Dest: "dst-cc"})

	jobs := sameKeyJobs(t, b)
	if len(jobs) != 50 {
		t.Fatalf("%d jobs", len(jobs))
	}
	replies := make([][4]*caller.Reply, len(jobs))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for j := range jobs {
		for copy := range 4 {
			node := nodes[(j+copy)%len(nodes)]
			wg.Go(func() {
				<-start
				r, err := node.client.Send(ctx, jobs[j].endpoint, jobs[j].claims)
				if err != nil {
					t.Error(err)
					return
				}
				replies[j][copy] = r
			})
		}
	}
	close(start)
	wg.Wait()
	if t.Failed() {
		return
	}
	for j, rs := range replies {
		for copy, r := range rs {
			if r.Status != 200 || r.Outcome() != "approved" {
				t.Fatalf("job %d (%s) copy %d: %d %v %v", j, jobs[j].endpoint, copy, r.Status, r.Service, r.Problem)
			}
			if !reflect.DeepEqual(r.Service, rs[0].Service) {
				t.Fatalf("job %d: answers differ: %v vs %v", j, r.Service, rs[0].Service)
			}
		}
	}
	// 20 new holds of 2.00 held; 10 of 1.00 captured; 10 released;
	// 10 credits of 3.00.
	storetest.AssertBalances(t, b.db, "cc-src", "990", "40", "950")
	storetest.AssertBalances(t, b.db, "cc-dst", "30", "0", "30")
	var effects, attempts int
	if err := b.pool.QueryRow(ctx, `SELECT count(*), sum(attempts) FROM callback_requests WHERE idempotency_key <> 'pre'`).Scan(&effects, &attempts); err != nil {
		t.Fatal(err)
	}
	if effects != 50 || attempts != 200 {
		t.Fatalf("%d idempotency records with %d attempts, want 50 and 200", effects, attempts)
	}
	storetest.AssertInvariants(t, b.db)
	if group > 0 {
		var batched int64
		for _, n := range nodes {
			batched += n.db.GroupCommit().Batched.Load()
		}
		if batched == 0 {
			t.Fatal("group commit on, 200 callbacks at once on two lanes, and no batch formed")
		}
	}
}
