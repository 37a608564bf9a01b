package server_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/provider-ledger/adapter/callbacks/caller"
	"github.com/provider-ledger/adapter/callbacks/claims"

	"github.com/provider-ledger/adapter/envelope"
	"github.com/provider-ledger/adapter/store/storetest"
)

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns
// their paths and a pool trusting the certificate.
func selfSigned(t *testing.T) (certFile, keyFile string, roots *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ledgerd-test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	roots = x509.NewCertPool()
	roots.AddCert(cert)
	return certFile, keyFile, roots
}

func TestRunWithTLS(t *testing.T) {
	t.Parallel()
	certFile, keyFile, roots := selfSigned(t)
	secret := randomKey(t)
	d := start(t, config(t, "DATABASE_URL", storetest.URL(t), "LEDGER_PROVIDER_ID", "bank-tls",
		"LEDGER_SIGNING_SECRETS", base64.StdEncoding.EncodeToString(secret),
		"LEDGER_TLS_CERT", certFile, "LEDGER_TLS_KEY", keyFile))
	c := &caller.Client{BaseURL: "https://" + d.callbacks + "/ledger", Key: envelope.Key{Secret: secret},
		HTTP: &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}}
	r, err := c.Send(context.Background(), claims.Capture, map[string]any{"providerID": "bank-tls", "payoutID": "p",
		"holdReference": "hold_tls", "idempotencyKey": "k"})
	if err != nil || r.Status != 200 || r.Outcome() != "approved" {
		t.Fatalf("callback over TLS: %+v %v", r, err)
	}
	// Plain HTTP to the TLS listener gets no callback answer.
	plain := &caller.Client{BaseURL: "http://" + d.callbacks + "/ledger", Key: envelope.Key{Secret: secret}}
	if r, err := plain.Send(context.Background(), claims.Capture, map[string]any{"providerID": "bank-tls", "payoutID": "p",
		"holdReference": "hold_tls", "idempotencyKey": "k"}); err == nil && r.Status == 200 {
		t.Fatal("the TLS listener answered a plain-HTTP callback")
	}
}
