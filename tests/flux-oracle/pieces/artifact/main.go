// The files source-controller's artifact holds for a directory: fluxcd/pkg sourceignore's
// patterns (.sourceignore files, then the ignore text given as the second argument) and
// artifact/storage's SourceIgnoreFilter and Archive walk (regular files and directories only).
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fluxcd/pkg/sourceignore"
)

func main() {
	dir, _ := filepath.Abs(os.Args[1])
	domain := strings.Split(dir, string(filepath.Separator))
	ps, err := sourceignore.LoadIgnorePatterns(dir, domain)
	if err != nil {
		panic(err)
	}
	if len(os.Args) > 2 {
		ps = append(ps, sourceignore.ReadPatterns(strings.NewReader(os.Args[2]), domain)...)
	}
	matcher := sourceignore.NewDefaultMatcher(ps, domain)
	if len(ps) > 0 {
		ps = append(sourceignore.VCSPatterns(domain), ps...)
		matcher = sourceignore.NewMatcher(ps)
	}
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if m := fi.Mode(); !(m.IsRegular() || m.IsDir()) {
			return nil
		}
		if matcher.Match(strings.Split(p, string(filepath.Separator)), fi.IsDir()) {
			return nil
		}
		if fi.Mode().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			fmt.Println(rel)
		}
		return nil
	})
}
