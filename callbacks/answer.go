package callbacks

import (
	"encoding/json"

	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/ledger"
)

// referenceClaims names the reference each endpoint answers.
var referenceClaims = map[string]string{
	Authorize:     "holdReference",
	Capture:       "captureReference",
	Release:       "releaseReference",
	CreditAccount: "creditReference",
}

// responseService is the service object of every callback's answer, the
// one declaration of its wire shape (design 2.1 and 2.3 to 2.6):
//
//	{"outcome": "...", "<reference claim>": "...", "reason": "...", "idempotencyKey": "..."}
//
// with the reference only when one is answered (approved) and the reason
// only for a refusal. It is rebuilt from the stored answer on every replay.
func responseService(endpoint, key string, d ledger.Decision) json.RawMessage {
	b := make([]byte, 0, 64+len(d.Outcome)+len(d.Reference)+len(d.Reason)+len(key))
	b = append(b, `{"outcome":`...)
	b = envelope.AppendJSONString(b, d.Outcome)
	if d.Reference != "" {
		b = append(b, `,"`...)
		b = append(b, referenceClaims[endpoint]...)
		b = append(b, `":`...)
		b = envelope.AppendJSONString(b, d.Reference)
	}
	if d.Reason != "" {
		b = append(b, `,"reason":`...)
		b = envelope.AppendJSONString(b, d.Reason)
	}
	b = append(b, `,"idempotencyKey":`...)
	b = envelope.AppendJSONString(b, key)
	return append(b, '}')
}
