package ledger

import (
	"errors"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// checkIdentifier applies Unicode's identifier-security rules (UTS #39,
// section 5) to an account ID already in NFC without white space,
// controls or format characters, so that an ID cannot print like
// another's:
//
//   - A restricted profile: beyond printable ASCII, only letters, marks
//     and decimal digits, in NFKC (no full-width "１", no ligature "ﬁ", no
//     Roman numeral "Ⅰ", no compatibility variant), and no default
//     ignorable code point (the Hangul fillers U+115F, U+3164, U+FFA0, the
//     combining grapheme joiner U+034F, variation selectors such as
//     U+FE0F) nor a symbol such as the blank braille pattern U+2800.
//   - No mixed scripts: the characters of scripts other than Common and
//     Inherited are of one script (Cyrillic "раураl" mixes Cyrillic and
//     Latin, "pοypal" Greek and Latin), or of one of UTS #39's highly
//     restrictive combinations: Latin with Han, Hiragana and Katakana
//     (Japanese), with Han and Bopomofo (Chinese), with Han and Hangul
//     (Korean).
//
// What it leaves, a whole-script look-alike (the dotless "ı" is Latin),
// the confusable skeleton of the accounts catches. The error says which
// rule, never the ID.
func checkIdentifier(id string) error {
	for _, r := range id {
		switch {
		case r < 0x80:
			// Printable ASCII: the callers refuse controls and white space.
		case unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) || unicode.Is(unicode.Variation_Selector, r):
			return errors.New("must not contain invisible characters (Hangul fillers, the combining grapheme joiner, variation selectors)")
		case !unicode.IsLetter(r) && !unicode.IsMark(r) && !unicode.Is(unicode.Nd, r):
			return errors.New("must be letters, marks and digits beyond ASCII (no symbols or punctuation outside ASCII)")
		}
	}
	if !norm.NFKC.IsNormalString(id) {
		return errors.New("must be in Unicode normalization form KC (no full-width, ligature, Roman numeral or other compatibility characters)")
	}
	if mixedScripts(id) {
		return errors.New("must not mix scripts (such as Latin with Cyrillic or Greek letters)")
	}
	return nil
}

// restrictive are the script sets UTS #39's highly restrictive level
// allows together.
var restrictive = [][]*unicode.RangeTable{
	{unicode.Latin, unicode.Han, unicode.Hiragana, unicode.Katakana},
	{unicode.Latin, unicode.Han, unicode.Bopomofo},
	{unicode.Latin, unicode.Han, unicode.Hangul},
}

// mixedScripts reports whether id's characters outside Common and
// Inherited belong to more than one script, other than in one of the
// restrictive sets.
func mixedScripts(id string) bool {
	var seen []*unicode.RangeTable
	for _, r := range id {
		if unicode.Is(unicode.Common, r) || unicode.Is(unicode.Inherited, r) {
			continue
		}
		t := scriptOf(r)
		if t != nil && !containsTable(seen, t) {
			seen = append(seen, t)
		}
	}
	if len(seen) <= 1 {
		return false
	}
	for _, set := range restrictive {
		all := true
		for _, t := range seen {
			all = all && containsTable(set, t)
		}
		if all {
			return false
		}
	}
	return true
}

// scriptOf returns the script table of r (nil when none claims it).
func scriptOf(r rune) *unicode.RangeTable {
	if unicode.Is(unicode.Latin, r) {
		return unicode.Latin
	}
	for _, t := range unicode.Scripts {
		if unicode.Is(t, r) {
			return t
		}
	}
	return nil
}

func containsTable(ts []*unicode.RangeTable, t *unicode.RangeTable) bool {
	for _, u := range ts {
		if u == t {
			return true
		}
	}
	return false
}
