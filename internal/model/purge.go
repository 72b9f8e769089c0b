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
}
