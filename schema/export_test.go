package schema

// Exported for the tests of package schema_test, which cannot be in
// package schema: they use store/storetest, which imports schema.
var (
	CheckFunctionFile = checkFunctionFile
	ApplyFunctions    = applyFunctions
	HashFiles         = hashFiles
)

// CreateFunctionTable is the statement that makes FunctionTable.
const CreateFunctionTable = createFunctionTable
