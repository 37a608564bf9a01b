// Package deploy holds no code: it is the home of the deployment files and
// of the tests that keep them true to the code.
//
// The directory has the container and monitoring setup of ledgerd: the
// compose file (compose.yaml, with secrets.sh writing the secrets it mounts),
// Prometheus's configuration and alert rules with their promtool unit tests
// (prometheus/), the Grafana dashboard and provisioning (grafana/), and
// metrics.txt: every ledgerd_ metric ledgerd exports (held to its registry
// by the server package's TestMetricsDocumented) and the process metrics
// the dashboard uses. The image
// they run is built by the Dockerfile at the root of the repository.
//
// The tests check what can be checked without a container engine: that the
// dashboard parses and every panel has a query; that every metric the
// dashboard and the rules name is in metrics.txt; that
// every alert has a unit test where it fires and one where it does not; that
// the env vars the compose file gives ledgerd are in the ledgerd table of
// docs/configuration.md, and every env var ledgerd reads is there and in
// docs/contract.md; and that the secrets the compose file mounts are the
// ones secrets.sh writes, in a form ledgerd and Postgres accept.
package deploy
