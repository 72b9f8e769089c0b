package model

// patchField sets a field a patch sends over *dst and records what check finds wrong with it
// (check nil: anything goes); a field the patch does not send is required on create, and kept
// on update.
func patchField[T any](errs *FieldErrors, field string, sent, dst *T, create bool, check func(T) string) {
	if sent == nil {
		if create {
			errs.Add(field, "is required")
		}
		return
	}
	*dst = *sent
	if check == nil {
		return
	}
	if msg := check(*sent); msg != "" {
		errs.Add(field, "%s", msg)
	}
}

// oneOf is a check that a value is one of values; msg says which they are.
func oneOf[T comparable](values []T, msg string) func(T) string {
	return func(v T) string {
		for _, x := range values {
			if x == v {
				return ""
			}
		}
		return msg
	}
}
