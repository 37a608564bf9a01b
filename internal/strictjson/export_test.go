package strictjson

// MaxDepth exposes maxDepth to the external tests, which check that a value
// nested exactly that deep is accepted.
const MaxDepth = maxDepth
