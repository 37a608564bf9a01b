// Package docs is the project's manual: the Markdown files of this
// directory, which README.md points into. It has no code. Its tests hold
// the manual to the code, so that it cannot drift:
//
//   - every finding kind the findings tables of reconciliation.md and of
//     contract.md section 5 list is one reconciliation reports, with its
//     severity, and every kind it reports is in both tables;
//   - every SQL function the Markdown files of the repository name (as
//     `name(…)`, or by its file schema/functions/<name>.sql) exists in a
//     migrated database, and every parameter they name (p_…, also in
//     `name(p_key => …)`) is one of its parameters;
//   - every environment variable they name is in a table of
//     configuration.md, where each binary's test (cmd/ledgerd, cmd/ledgerctl,
//     cmd/servicesim, loadtest) holds its table to what it reads;
//   - every relative link between them resolves, anchors included.
//
// development.md ("Docs that cannot drift") says the same for a reader of
// the manual.
package docs
