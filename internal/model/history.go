package model

import "time"

// HistoryDays is how many days a website's history is kept: the daily results (lab results,
// user-experience records and search analytics, one item per page, device and day), multistep
// runs, test series and their tests, and the changes of level found in them once they are over
// (see Regression.End). It is the longest range the API answers in one request (a timeline's
// date range), so that any such range ending today is answered whole; what the API and the
// workers read by default is shorter (the lists' 30 days, the timelines' 90, the detection's
// 60, the multistep statistics' 14). Each of these items holds its end (HistoryEnd) in the
// table's TTL attribute, and DynamoDB deletes it some time after that (usually within days).
const HistoryDays = 731

// HistoryEnd is when an item of the history of day (yyyymmdd) may go: HistoryDays after that
// day began, so that a range of HistoryDays days ending on any day until then holds it. A day
// that does not parse counts from now.
func HistoryEnd(day string) time.Time {
	start, err := time.Parse(DayLayout, day)
	if err != nil {
		start = time.Now().UTC().Truncate(24 * time.Hour)
	}
	return start.AddDate(0, 0, HistoryDays)
}
