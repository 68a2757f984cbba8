// Package drafts is the promotion gate: skills proposed by agents or
// people wait in a workspace's skills/_drafts/ until a person promotes
// them into a local layer or a source, or rejects them.
//
// A Folder is the drafts folder itself: proposals copied in without
// following a link out of the skill, strict inspection, one lock per
// draft name, and the moves out of it that never replace anything. A Gate
// adds the policy (Policy: who approves, where drafts may go, automatic
// promotion), the comparison with the skill that stands now, and the audit
// log. Drafts are never in the catalog, the cache or a target.
//
// The gate knows no kind of source: a source takes a draft when the
// repository the caller opened for it is a repository.Publisher.
package drafts
