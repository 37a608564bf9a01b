package server

import (
	"bytes"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/provider-ledger/adapter/callbacks"
	"github.com/provider-ledger/adapter/internal/problem"
	"github.com/provider-ledger/adapter/store"
)

// unreplicatedGuard withholds a success whose commit the synchronous
// standby did not confirm (see store.WatchCommits): the request's database
// statements run under a commit watch, its answer is held until the
// handler returns, and a 2xx answer of a request whose commit was
// unreplicated is replaced by 503 database-unavailable. What was committed
// is the stored answer: the service's retry with the same key gets it once
// it is replicated (the retry's own commit waits for the standby again).
// Without synchronous replication the watch never fires.
type unreplicatedGuard struct {
	next     http.Handler
	listener string
	d        *daemon
	withheld prometheus.Counter
}

func (d *daemon) guardUnreplicated(next http.Handler, listener string) http.Handler {
	g := &unreplicatedGuard{next: next, listener: listener, d: d, withheld: prometheus.NewCounter(prometheus.CounterOpts{
		Name:        "ledgerd_unreplicated_answers_withheld_total",
		Help:        "Successes answered 503 instead because their commit was not confirmed by the synchronous standby.",
		ConstLabels: prometheus.Labels{"listener": listener},
	})}
	d.reg.MustRegister(g.withheld)
	return g
}

func (g *unreplicatedGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx, watch := store.WatchCommits(r.Context())
	buf := &heldResponse{header: http.Header{}}
	g.next.ServeHTTP(buf, r.WithContext(ctx))
	if watch.Unreplicated() && buf.status() >= 200 && buf.status() < 300 {
		g.withheld.Inc()
		g.d.log.Warn("answer withheld: its commit was not confirmed by the synchronous standby", "listener", g.listener,
			"path", r.URL.Path, "status", buf.status())
		p := problem.New(callbacks.SlugUnavailable, http.StatusServiceUnavailable,
			"the commit was not confirmed by the synchronous standby; retry with the same key")
		p.RetryAfter = time.Second
		problem.Write(w, p)
		return
	}
	for k, v := range buf.header {
		w.Header()[k] = v
	}
	w.WriteHeader(buf.status())
	_, _ = w.Write(buf.body.Bytes())
}

// heldResponse is a response kept until the handler returns.
type heldResponse struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (h *heldResponse) Header() http.Header { return h.header }

func (h *heldResponse) WriteHeader(code int) {
	if h.code == 0 {
		h.code = code
	}
}

func (h *heldResponse) Write(b []byte) (int, error) {
	if h.code == 0 {
		h.code = http.StatusOK
	}
	return h.body.Write(b)
}

func (h *heldResponse) status() int {
	if h.code == 0 {
		return http.StatusOK
	}
	return h.code
}
