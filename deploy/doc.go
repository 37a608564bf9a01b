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
// The tests check what can be checked without a container engine. The
// monitoring: that the dashboard parses, every panel has a query and a unit,
// a percent panel divides like by like, and every query goes to the
// datasource variable and is filtered by the job and replica variables; that
// every metric the dashboard and the rules name is in metrics.txt and is
// served by a real ledgerd from its start (but those absent until there is
// something to say, where each query says what absence means: 0 for the
// holds, "no run yet" for the last reconciliation); that every gauge an
// alert reads goes through an _over_time function, so that a failed scrape
// does not reset its wait; that the latency alerts' thresholds are bucket
// bounds; that every alert has a unit test where it fires and one where it
// does not, and that the rules and their tests pass under the promtool of
// the Prometheus release compose.yaml runs (which .ci/run builds). The
// configuration: that the env vars the compose file gives ledgerd are in the
// ledgerd table of docs/configuration.md, and every env var ledgerd reads is
// there and in docs/contract.md; that the secrets the compose file mounts
// are the ones secrets.sh writes, in a form ledgerd and Postgres accept.
package deploy
