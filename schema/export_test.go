package schema

// Exported for the tests of package schema_test, which cannot be in
// package schema: they use store/storetest, which imports schema.
var (
	CheckFunctionFile = checkFunctionFile
	ApplyFunctions    = applyFunctions
	HashFiles         = hashFiles
	Migrations        = migrations
)

const (
	// CreateFunctionTable is the statement that makes FunctionTable.
	CreateFunctionTable = createFunctionTable
	// VersionTable is the table tern records the schema version in.
	VersionTable = versionTable
	// FunctionTable is the table of applied function bodies and checksums.
	FunctionTable = functionTable
)
