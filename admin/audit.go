package admin

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/provider-ledger/adapter/adminapi"
	"github.com/provider-ledger/adapter/ledger"
)

// write serves an admitted write and records it in the audit trail,
// exactly once whatever happens: a write of one transaction has its
// record appended last in that transaction (AuditTrail.Audited), so that
// the effect and its record commit together or not at all; a write of
// many (the route table's alone) and any write that failed have theirs
// appended on their own, with the status answered.
func (s *Handler) write(w http.ResponseWriter, c *call, ps httprouter.Params, h handlerFunc) {
	body, err := readBody(w, c.r)
	if err == nil {
		c.rec.BodyDigest = digest(body, c.route.redact)
		err = validRequest(c.r, ps)
	}
	if err == nil {
		err = sameOrigin(c.r)
	}
	var v any
	status := 0
	if err == nil {
		// Each attempt reads the body afresh: Audited runs it again after
		// a serialization failure.
		target := c.rec.Target
		attempt := func(ctx context.Context) (int, error) {
			c.rec.Target = target
			r := c.r.WithContext(ctx)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var err error
			status, v, err = h(r, ps)
			return status, err
		}
		if c.route.alone || s.cfg.DB == nil {
			_, err = attempt(c.r.Context())
			if err == nil {
				c.rec.Status = status
				s.appendAlone(c.r, c.rec)
			}
		} else {
			_, err = s.cfg.DB.Audited(c.r.Context(), func(ctx context.Context) (ledger.AuditRecord, error) {
				status, err := attempt(ctx)
				rec := c.rec
				rec.Status = status
				return rec, err
			})
		}
	}
	if err != nil {
		c.rec.Status = s.statusOf(err)
		s.appendAlone(c.r, c.rec)
		s.writeError(w, c.r, err)
		return
	}
	respond(w, status, v)
}

// crossOrigin tells a browser's request sent by a page of another site
// (Sec-Fetch-Site, else Origin against Host) from every other request.
var crossOrigin = http.NewCrossOriginProtection()

// sameOrigin refuses a write that a browser sends on behalf of a page of
// another site (403 cross-origin-request): on a loopback listener without
// a token the admin API takes writes from anyone on the machine, and a
// page the operator has open must not be one of them. Clients that are not
// browsers send neither header and are not affected, whatever Content-Type
// they give the body (it is read as JSON all the same).
func sameOrigin(r *http.Request) error {
	if crossOrigin.Check(r) != nil {
		return &ledger.Error{Code: ledger.CodeForbidden, Slug: slugCrossOriginRequest,
			Message: "a browser's request from a page of another site may not write here"}
	}
	return nil
}

// readBody reads a request body of at most MaxBody bytes.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	if err != nil {
		return nil, decodeError(err)
	}
	return body, nil
}

// digest is what the audit trail keeps of a body: its hex SHA-256, ""
// without one, ledger.DigestRedacted for a body that carries a secret (a
// digest would let a reader confirm a guess of it).
func digest(body []byte, redact bool) string {
	switch {
	case len(body) == 0:
		return ""
	case redact:
		return ledger.DigestRedacted
	}
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}

// listAudit is GET /v1/audit?actor=&from=&to=&cursor=&limit=: one page of
// the audit trail, oldest first.
func (s *Handler) listAudit(r *http.Request, _ httprouter.Params) (int, any, error) {
	q, err := readQuery(r, "actor", "from", "to", "cursor", "limit")
	if err != nil {
		return 0, nil, err
	}
	o := ledger.AuditListOptions{Actor: q["actor"], Cursor: q["cursor"]}
	if o.Limit, err = q.limit(); err != nil {
		return 0, nil, err
	}
	if o.From, err = q.time("from"); err != nil {
		return 0, nil, err
	}
	if o.To, err = q.time("to"); err != nil {
		return 0, nil, err
	}
	p, err := s.cfg.DB.ListAudit(r.Context(), o)
	if err != nil {
		return 0, nil, err
	}
	out := adminapi.AuditList{Records: make([]adminapi.AuditRecord, 0, len(p.Records)), NextCursor: p.NextCursor, HasMore: p.HasMore}
	for _, rec := range p.Records {
		out.Records = append(out.Records, viewAudit(rec))
	}
	return http.StatusOK, out, nil
}

func viewAudit(r ledger.AuditRecord) adminapi.AuditRecord {
	v := adminapi.AuditRecord{Seq: r.Seq, RecordedAt: adminapi.Timestamp{Time: r.RecordedAt}, ActorID: r.ActorID, ActorName: r.ActorName,
		Scope: r.Scope, Method: r.Method, Route: r.Route, Target: r.Target, Status: r.Status, Source: r.Source,
		PrevHash: hex.EncodeToString(r.PrevHash), Hash: hex.EncodeToString(r.Hash)}
	if r.BodyDigest != "" {
		v.BodyDigest = &r.BodyDigest
	}
	return v
}
