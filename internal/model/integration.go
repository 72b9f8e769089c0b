package model

import "time"

// SearchConsoleKind names the Search Console integration in keys and messages.
const SearchConsoleKind = "search-console"

// SearchConsole is a website's Search Console integration: the property whose search analytics
// are collected and the service account that reads them.
type SearchConsole struct {
	// Property is the Search Console property: a URL prefix (https://www.example.com/) or a
	// domain property (sc-domain:example.com).
	Property string
	// ServiceAccount is the service account's e-mail address, shown so that users know whom
	// to grant access to the property.
	ServiceAccount string
	// Credentials is the service account's JSON key, sealed (encrypted and authenticated);
	// it never leaves the store but to the collector.
	Credentials []byte
	Created     time.Time
	Updated     time.Time
	// LastCollected is when search analytics were last stored; LastError why the last
	// collection failed (empty after a success). Zero and empty before the first collection.
	LastCollected time.Time
	LastError     string
	LastErrorAt   time.Time
}

// IntegrationAAD is what a website's integration credentials are sealed for: they open only
// as the credentials of that integration of that website.
func IntegrationAAD(w Website, kind string) []byte {
	return []byte("integration\x00" + kind + "\x00" + w.Account + "\x00" + w.ID)
}
