// Command stamp prints buildinfo.Read(): buildinfo's test builds it with
// -ldflags -X to check that a stamped build prints the stamped version.
package main

import (
	"fmt"

	"github.com/provider-ledger/adapter/internal/buildinfo"
)

func main() { fmt.Println(buildinfo.Read()) }
