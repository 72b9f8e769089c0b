package model

import "time"

// PurgeJob names what a purge removes: a whole website, or one page, multistep test or
// experiment of it.
type PurgeJob struct {
	Account    string `json:"account"`
	Website    string `json:"website"`
	Page       string `json:"page,omitempty"`
	Test       string `json:"test,omitempty"`
	Experiment string `json:"experiment,omitempty"`
	// Requested is when the deletion was accepted.
	Requested time.Time `json:"requested"`
	// Retention asks for a website's daily retention pass instead of a deletion: what is
	// past the website's retention goes (no marker: the next day's pass makes up a lost one).
	Retention bool `json:"retention,omitempty" dynamodbav:",omitempty"`
}
