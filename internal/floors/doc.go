// Package floors holds no code: it is the home of the tests that keep the
// package picture of docs/architecture.md true.
//
//   - TestFloors: every package of the module sits on one floor of the
//     table in floors_test.go, and imports only packages of lower floors
//     (never one of its own floor: adapters do not import each other);
//     only the database boundary (store, schema, embedpg and the test kit
//     store/storetest) imports pgx.
//   - TestFunctionLength: no function or function literal is longer than
//     80 lines; the test functions that still are, listed by name, may
//     only become fewer.
//   - TestDocComments: every package has a package comment, and every
//     exported name outside tests a doc comment.
package floors
