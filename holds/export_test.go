package holds

// DecodeCursor exposes decodeCursor to the external tests, which check that
// a cursor that decodes is the cursor of the position it decodes to.
var DecodeCursor = decodeCursor
