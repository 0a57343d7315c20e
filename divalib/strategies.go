package divalib

import (
	"fmt"
	"strings"
)

// The strategies by name: this file is the one list of the strategies and
// access-tree variants paper 004 evaluates (section 2, "Implemented
// variations of the access tree strategy"; section 3 measures each), and
// of how they are named. Usage texts, parse errors, defaults and the
// order of report columns are generated from it.

// FixedHomeName is the fixed-home strategy's name.
const FixedHomeName = "fixed-home"

// treePrefix starts an access tree's name: "tree-" and the variant.
const treePrefix = "tree-"

// Variants are the access-tree variants the paper evaluates, in the order
// its reports list them: the 2-, 4- and 16-ary trees and the 2-4- and
// 4-16-ary ones.
func Variants() []Variant { return []Variant{Tree2, Tree4, Tree16, Tree2_4, Tree4_16} }

// TreeName is the name of the access tree of variant v: "tree-4",
// "tree-2-4".
func TreeName(v Variant) string { return treePrefix + v.String() }

// Evaluated are the names of the strategies the paper evaluates, in the
// order its reports list them: the fixed home, then the access tree of
// every variant (Variants).
func Evaluated() []string {
	out := []string{FixedHomeName}
	for _, v := range Variants() {
		out = append(out, TreeName(v))
	}
	return out
}

// StrategyList is Evaluated as a phrase, "fixed-home, tree-2, tree-4,
// tree-16, tree-2-4, tree-4-16", for texts that list the strategies
// among other choices (a store list's accepted form).
func StrategyList() string { return strings.Join(Evaluated(), ", ") }

// StrategyForms is the accepted form of a strategy name, for help texts:
// the evaluated strategies, and that any supported l-k-ary tree is named
// the same way.
func StrategyForms() string {
	return StrategyList() + " (any tree-L-K with L in {" + joinInts(leafArities(), ",") + "}, K >= L)"
}

// ParseStrategy parses a strategy name: FixedHomeName, or "tree-V" with V
// a Variant (ParseVariant: one of Variants, or any supported L-K).
func ParseStrategy(s string) (Strategy, Variant, error) {
	switch {
	case s == FixedHomeName:
		return FixedHome, Variant{}, nil
	case strings.HasPrefix(s, treePrefix):
		v, err := ParseVariant(strings.TrimPrefix(s, treePrefix))
		if err != nil {
			return 0, v, err
		}
		return AccessTree, v, nil
	}
	return 0, Variant{}, fmt.Errorf("strategy %q: accepted are %s and %sV with V one of %s (or L-K)", s, FixedHomeName, treePrefix, variantList(Variants()))
}

// variantList names variants as "2, 4, 16, 2-4, 4-16".
func variantList(vs []Variant) string {
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = v.String()
	}
	return strings.Join(names, ", ")
}

// lAry and lkAry split Variants into the l-ary trees and the l-k-ary ones.
func lAry() (l, lk []Variant) {
	for _, v := range Variants() {
		if v.Leaf == 0 {
			l = append(l, v)
		} else {
			lk = append(lk, v)
		}
	}
	return l, lk
}

// leafArities are the arities an l-k-ary tree may have: those of the
// evaluated l-k-ary trees.
func leafArities() []int {
	var out []int
	_, lk := lAry()
	for _, v := range lk {
		if len(out) == 0 || out[len(out)-1] != v.Arity {
			out = append(out, v.Arity)
		}
	}
	return out
}

func joinInts(v []int, sep string) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, sep)
}
