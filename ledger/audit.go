package ledger

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"
)

// The audit trail (table audit_log): one record per admin write and per
// refused attempt of the admin API, each carrying the hash of the record
// before it, so that an edit or a deletion breaks the chain.

// AuditRecord is one record of the audit trail.
type AuditRecord struct {
	// Seq counts records from 1 without a gap.
	Seq        int64
	RecordedAt time.Time
	// ActorID and ActorName: the token's ID and name (BreakGlass,
	// Anonymous or Unauthenticated for the actors that are no token).
	ActorID, ActorName string
	// Scope is the scope the route needs ("" when none).
	Scope  string
	Method string
	// Route is the route's template: /v1/accounts/{accountID}.
	Route string
	// Target is what the request named or created: accountID=acc-1.
	Target string
	Status int
	// BodyDigest is the hex SHA-256 of the request body, "" without one,
	// DigestRedacted for a body that carries a secret.
	BodyDigest string
	// Source is the peer's address.
	Source         string
	PrevHash, Hash []byte
}

// DigestRedacted is the BodyDigest of a request whose body carries a
// secret (a signing secret): no digest of it is kept, since a digest would
// let a reader confirm a guess.
const DigestRedacted = "redacted"

// auditTimeFormat is how an audit record's time enters its hash: UTC with
// microseconds, the precision Postgres keeps.
const auditTimeFormat = "2006-01-02T15:04:05.000000Z"

// AuditGenesis is the PrevHash of the first record: 32 zero bytes.
func AuditGenesis() []byte { return make([]byte, sha256.Size) }

// AuditHash is the hash of r after the record whose hash is prev: SHA-256
// of prev, "ledger-audit-v1;", then each field as "<length in bytes>:<the
// field>;" (seq, recorded at, actor ID, actor name, scope, method, route,
// target, status, body digest, source). The server-side function
// audit_hash computes the same.
func AuditHash(prev []byte, r AuditRecord) []byte {
	h := sha256.New()
	h.Write(prev)
	h.Write([]byte("ledger-audit-v1;"))
	for _, f := range []string{strconv.FormatInt(r.Seq, 10), r.RecordedAt.UTC().Format(auditTimeFormat), r.ActorID, r.ActorName,
		r.Scope, r.Method, r.Route, r.Target, strconv.Itoa(r.Status), r.BodyDigest, r.Source} {
		h.Write([]byte(strconv.Itoa(len(f)) + ":" + f + ";"))
	}
	return h.Sum(nil)
}

// chainBreak is where a sequence of audit records stops being a chain.
type chainBreak struct {
	Seq    int64
	Detail string
}

// Error says where the chain breaks.
func (b *chainBreak) Error() string {
	return fmt.Sprintf("audit record %d: %s", b.Seq, b.Detail)
}

// VerifyAuditChain checks that records, in order, are a chain: each
// record's hash is AuditHash of its fields after its PrevHash, each seq is
// one more than the one before, and each PrevHash is the hash of the
// record before it. The first record's PrevHash is taken as given unless
// it is record 1, whose PrevHash must be AuditGenesis: a part of the chain
// is verified against its first predecessor's hash, which the caller
// compares with what it archived before. It returns the first break, a
// *chainBreak, or nil.
func VerifyAuditChain(records []AuditRecord) error {
	for i, r := range records {
		switch {
		case i == 0 && r.Seq == 1 && !bytes.Equal(r.PrevHash, AuditGenesis()):
			return &chainBreak{r.Seq, "the first record does not start the chain (its previous hash is not zero)"}
		case i > 0 && r.Seq != records[i-1].Seq+1:
			return &chainBreak{r.Seq, fmt.Sprintf("it follows record %d: the records between are missing", records[i-1].Seq)}
		case i > 0 && !bytes.Equal(r.PrevHash, records[i-1].Hash):
			return &chainBreak{r.Seq, fmt.Sprintf("its previous hash %s is not record %d's", hex.EncodeToString(r.PrevHash), records[i-1].Seq)}
		case !bytes.Equal(AuditHash(r.PrevHash, r), r.Hash):
			return &chainBreak{r.Seq, "its fields do not match its hash: it was changed after it was written"}
		}
	}
	return nil
}

// AuditListOptions are the filters of a page of the audit trail, oldest
// first.
type AuditListOptions struct {
	// Actor keeps the records of one actor, by token ID or by name.
	Actor string
	// From and To bound RecordedAt, From included, To excluded; zero
	// leaves that end open.
	From, To time.Time
	Cursor   string
	Limit    int
}

// AuditPage is one page of the audit trail.
type AuditPage struct {
	Records    []AuditRecord
	NextCursor string
	HasMore    bool
}
