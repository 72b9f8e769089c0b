// Package entity names the organisation behind a script's host with the third-party-web
// dataset (npm third-party-web, MIT, the dataset Lighthouse uses; see LICENSE.third-party-web):
// its entities' names and domains are embedded in entities.txt, which a test keeps identical
// to the package pinned in layers/rum. It is its own package so that only the binaries that
// attribute scripts carry the dataset.
package entity

import (
	_ "embed"
	"net"
	"regexp"
	"strings"
	"sync"
)

// entities.txt holds one entity a line: its name, a tab, and its domains separated by spaces
// ("*.example.com" for every subdomain).
//
//go:embed entities.txt
var dataset string

type index struct {
	byDomain, bySubDomain, byRootDomain map[string]string
}

var (
	once sync.Once
	idx  index
)

// load builds the maps of third-party-web's entity finder.
func load() {
	idx = index{byDomain: map[string]string{}, bySubDomain: map[string]string{}, byRootDomain: map[string]string{}}
	for line := range strings.Lines(dataset) {
		name, domains, ok := strings.Cut(strings.TrimRight(line, "\n"), "\t")
		if !ok {
			continue
		}
		for _, d := range strings.Fields(domains) {
			idx.byDomain[d] = name
			if wild, ok := strings.CutPrefix(d, "*."); ok {
				if wild == rootDomain(wild) {
					idx.byRootDomain[wild] = name
				} else {
					idx.bySubDomain[wild] = name
				}
			}
		}
	}
}

var rootDomainRE = regexp.MustCompile(`(?i)[^.]+\.([^.]+|(gov|com|co|ne)\.\w{2})$`)

// rootDomain is third-party-web's root domain of a host: the last two labels, or three for
// gov|com|co|ne followed by a two-letter code.
func rootDomain(host string) string {
	if net.ParseIP(host) != nil {
		return host
	}
	if m := rootDomainRE.FindString(host); m != "" {
		return m
	}
	return host
}

// Of names the entity of a host (no port): the dataset's entity, or "" when the dataset does
// not know the host.
func Of(host string) string {
	once.Do(load)
	host = strings.ToLower(host)
	if host == "" {
		return ""
	}
	if name, ok := idx.byDomain[host]; ok {
		return name
	}
	root := rootDomain(host)
	for sub := host; len(sub) > len(root); {
		if name, ok := idx.bySubDomain[sub]; ok {
			return name
		}
		_, rest, ok := strings.Cut(sub, ".")
		if !ok {
			break
		}
		sub = rest
	}
	return idx.byRootDomain[root]
}

// RootDomain is the registrable part of a host as the dataset reckons it, which names an
// entity the dataset does not know.
func RootDomain(host string) string { return rootDomain(strings.ToLower(host)) }
