//! Text to search terms: words split at punctuation, `snake_case`, `camelCase` and paths,
//! common words dropped, English stems, and a query's words widened by their synonyms.

use rust_stemmers::{Algorithm, Stemmer};
use std::sync::LazyLock;

/// How much a synonym of a query word counts, against the word itself.
pub(super) const SYNONYM_WEIGHT: f32 = 0.6;

static STEMMER: LazyLock<Stemmer> = LazyLock::new(|| Stemmer::create(Algorithm::English));

/// Lower-case words: split at anything not a letter or digit, and at camelCase humps (an
/// upper-case run keeps its last letter for the next word: `HTTPServer` is `http server`).
pub(crate) fn words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut current = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            words.extend((!current.is_empty()).then(|| std::mem::take(&mut current)));
            continue;
        }
        if c.is_uppercase() && !current.is_empty() {
            let previous = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            if previous.is_lowercase() || previous.is_ascii_digit() || (previous.is_uppercase() && next_lower) {
                words.push(std::mem::take(&mut current));
            }
        }
        current.extend(c.to_lowercase());
    }
    words.extend((!current.is_empty()).then_some(current));
    words
}

/// Words that say nothing about what a tool does: requests are full of them ("I want to see
/// all of my ..."), and in descriptions they only dilute.
const STOPWORDS: &[&str] = &[
    "a", "about", "after", "again", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be", "been", "before",
    "being", "but", "by", "can", "could", "do", "does", "doing", "done", "each", "every", "for", "from", "had", "has",
    "have", "having", "he", "her", "here", "him", "his", "how", "i", "if", "in", "into", "is", "it", "its", "just",
    "let", "lets", "like", "me", "might", "more", "most", "must", "my", "need", "needs", "now", "of", "off", "on",
    "once", "one", "only", "or", "our", "ours", "out", "over", "please", "same", "she", "should", "so", "some", "such",
    "than", "that", "the", "their", "them", "then", "there", "these", "they", "this", "those", "through", "to", "too",
    "under", "up", "us", "use", "used", "using", "very", "wanna", "want", "was", "we", "were", "what", "when", "where",
    "whether", "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your", "yours",
];

pub(super) fn is_stopword(word: &str) -> bool {
    STOPWORDS.binary_search(&word).is_ok()
}

/// A word's search term: its English stem.
pub(super) fn stem(word: &str) -> String {
    STEMMER.stem(word).into_owned()
}

/// The terms of a text, in order, common words left out.
pub(super) fn terms(text: &str) -> Vec<String> {
    words(text).into_iter().filter(|w| !is_stopword(w)).map(|w| stem(&w)).collect()
}

/// Groups of words and phrases that ask for the same thing in requests to APIs. A query word
/// (or two-word phrase) in a group also looks for the others, at [`SYNONYM_WEIGHT`]. General
/// developer vocabulary, not tuned to any catalog's names. Actions first: a clause of a query
/// starts at one of these (see [`clauses`]).
const ACTIONS: &[&[&str]] = &[
    &["create", "add", "new", "make", "open", "start", "register", "set up", "spin up", "file", "publish"],
    &[
        "delete", "remove", "drop", "erase", "destroy", "get rid", "clear", "purge", "revoke", "unset", "kick",
        "kick out",
    ],
    &["list", "show", "all", "enumerate", "browse", "which", "every", "who"],
    &[
        "get", "fetch", "retrieve", "read", "view", "show", "see", "look up", "pull up", "inspect", "check", "details",
        "info", "what", "status",
    ],
    &["update", "edit", "change", "modify", "set", "rename", "adjust", "configure", "replace", "fix"],
    &["cancel", "stop", "abort", "halt", "kill", "terminate"],
    &["rerun", "re-run", "retry", "restart", "run again"],
    &["enable", "turn on", "activate", "allow", "switch on"],
    &["disable", "turn off", "deactivate", "block", "switch off", "suspend"],
    &["download", "export", "save", "archive"],
    &["upload", "import", "attach"],
    &["send", "post", "deliver", "notify", "email"],
    &["search", "find", "query", "look for", "lookup"],
    &["approve", "accept", "confirm", "ok"],
    &["reject", "deny", "decline", "dismiss", "refuse"],
    &["trigger", "dispatch", "kick off", "run", "launch", "fire"],
    &["copy", "duplicate", "clone", "fork"],
    &["move", "transfer", "migrate", "hand over"],
    &["count", "number", "how many", "total", "stats", "statistics", "metrics", "usage"],
    &["invite", "invitation", "onboard"],
    &["subscribe", "watch", "follow"],
    &["unsubscribe", "unwatch", "unfollow", "mute", "ignore"],
    &["lock", "freeze", "finalize"],
    &["unlock", "unfreeze", "reopen"],
    &["pause", "hold"],
    &["resume", "unpause", "continue"],
    &["refund", "money back", "reimburse", "pay back"],
    &["charge", "bill", "pay", "payment", "collect"],
];

/// Things requests name, grouped as [`ACTIONS`] are.
const THINGS: &[&[&str]] = &[
    &["repository", "repo", "repos", "codebase"],
    &["pull request", "pr", "prs", "merge request"],
    &["authenticated user", "my", "me", "mine", "myself", "i", "current user"],
    &["issue", "bug", "ticket", "bug report"],
    &["organization", "org", "company"],
    &["user", "person", "people", "account", "member", "someone", "somebody", "collaborator"],
    &["team", "group", "squad"],
    &["permission", "access", "role", "rights", "privilege"],
    &["secret", "token", "credential", "password", "api key"],
    &["key", "ssh", "gpg", "public key"],
    &["comment", "reply", "note", "remark"],
    &["label", "tag", "category"],
    &["release", "version", "tag"],
    &["file", "content", "contents", "document", "blob"],
    &["log", "logs", "output", "trace"],
    &["workflow", "ci", "pipeline", "action", "actions", "build"],
    &["job", "task", "step"],
    &["run", "execution", "build"],
    &["webhook", "hook", "callback", "endpoint"],
    &["event", "activity", "feed", "history", "audit"],
    &["notification", "alert", "inbox"],
    &["star", "stargazer", "favorite", "bookmark", "like"],
    &["reaction", "emoji", "thumbs up", "upvote", "like"],
    &["branch", "ref", "head"],
    &["commit", "change", "revision", "sha"],
    &["setting", "settings", "config", "configuration", "preference", "option"],
    &["variable", "var", "env", "environment variable"],
    &["environment", "env", "stage", "deployment target"],
    &["deployment", "deploy", "ship", "rollout"],
    &["vulnerability", "advisory", "cve", "security"],
    &["dependency", "package", "library", "dependencies"],
    &["snippet", "gist", "paste"],
    &["email", "mail", "address"],
    &["avatar", "picture", "photo", "image"],
    &["customer", "client", "buyer", "shopper", "payer"],
    &["subscription", "plan", "recurring", "membership"],
    &["invoice", "bill", "receipt"],
    &["price", "pricing", "cost", "amount", "rate"],
    &["product", "item", "sku", "goods"],
    &["coupon", "discount", "promo", "promotion code", "voucher"],
    &["payout", "withdraw", "withdrawal", "bank transfer", "cash out"],
    &["balance", "funds", "money"],
    &["dispute", "chargeback"],
    &["card", "credit card", "payment method"],
    &["session", "checkout"],
    &["limit", "quota", "rate limit", "cap", "throttle", "throttling"],
    &["owner", "admin", "administrator", "maintainer"],
    &["description", "readme"],
];

/// One word of a query and what else it may match.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Concept {
    /// Terms with their weights: the word's own stem at 1.0, synonyms below.
    pub(super) terms: Vec<(String, f32)>,
}

/// A query as concepts: each word widened by its synonyms (one- and two-word phrases both
/// look up the table; a phrase's words are then not taken again alone). A common word counts
/// only where the table gives it a meaning ("all" asks for a list, "my" for the caller's own),
/// and then only by that meaning; a word with a digit is a value (an id, a version), not what
/// the tool does, and is left out.
pub(super) fn query_concepts(query: &str) -> Vec<Concept> {
    let words: Vec<String> = query
        .split_whitespace()
        .filter(|token| !is_value(token))
        .flat_map(words)
        .filter(|w| !w.chars().any(|c| c.is_ascii_digit()))
        .collect();
    let mut concepts: Vec<Concept> = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let pair = words.get(i + 1).map(|next| format!("{} {next}", words[i]));
        if let Some(group) = pair.as_deref().and_then(synonym_group) {
            let own = terms(pair.as_deref().unwrap_or_default());
            concepts.push(concept(own, group));
            i += 2;
            continue;
        }
        let word = &words[i];
        i += 1;
        let own = if is_stopword(word) { Vec::new() } else { vec![stem(word)] };
        match synonym_group(word) {
            Some(group) => concepts.push(concept(own, group)),
            None if own.is_empty() => {}
            None => concepts.push(Concept { terms: own.into_iter().map(|t| (t, 1.0)).collect() }),
        }
    }
    // A word said twice is one concept.
    let mut seen = Vec::new();
    concepts.retain(|c| {
        let key = c.terms.first().map(|t| t.0.clone());
        let fresh = key.is_some() && !seen.contains(&key);
        seen.push(key);
        fresh
    });
    concepts
}

/// Whether a token of a request names a thing rather than says what to do: a path or an
/// `owner/name` (`acme/api`, `src/main.rs`), a file name (`ci.yml`), a `@handle` or `#42`.
fn is_value(token: &str) -> bool {
    let inner = token.trim_matches(|c: char| !c.is_alphanumeric() && c != '@' && c != '#');
    let joins = |separator: char| {
        let parts: Vec<&str> = inner.split(separator).collect();
        parts.len() > 1 && parts.iter().all(|p| p.chars().next().is_some_and(char::is_alphanumeric))
    };
    inner.starts_with(['@', '#']) || joins('/') || joins('.')
}

/// Whether `word` (or `word next`) starts an action: where a new clause of a request begins.
fn starts_action(word: &str, next: Option<&str>) -> bool {
    let pair = next.map(|next| format!("{word} {next}"));
    ACTIONS.iter().any(|group| group.contains(&word) || pair.as_deref().is_some_and(|p| group.contains(&p)))
}

/// The clauses of a request that asks for several steps ("create a repo, then add a webhook
/// to it"): split at `;`, at "then", and at a comma or "and" followed by an action. One
/// clause (the whole request) when there are no such breaks.
pub(super) fn clauses(query: &str) -> Vec<String> {
    let lower = query.to_lowercase();
    let mut tokens: Vec<&str> = Vec::new();
    let mut start = None;
    for (at, c) in lower.char_indices() {
        let in_word = c.is_alphanumeric() || c == '_' || c == '\'';
        match (in_word, start) {
            (true, None) => start = Some(at),
            (false, Some(from)) => {
                tokens.push(&lower[from..at]);
                start = None;
            }
            _ => {}
        }
        if matches!(c, ',' | ';') {
            tokens.push(&lower[at..at + 1]);
        }
    }
    tokens.extend(start.map(|from| &lower[from..]));
    let mut clauses = vec![Vec::new()];
    for (i, token) in tokens.iter().enumerate() {
        let rest = tokens[i + 1..].iter().copied().skip_while(|t| matches!(*t, "and" | "then" | ","));
        let mut rest = rest.peekable();
        let next = rest.next();
        let after = rest.next();
        let breaks = match *token {
            ";" | "then" => true,
            "," | "and" => next.is_some_and(|n| starts_action(n, after)),
            _ => false,
        };
        if breaks {
            clauses.push(Vec::new());
        } else if token.chars().next().is_some_and(char::is_alphanumeric) {
            clauses.last_mut().expect("one clause at least").push(*token);
        }
    }
    clauses.into_iter().filter(|words| words.iter().any(|w| !is_stopword(w))).map(|words| words.join(" ")).collect()
}

/// Every group a word or phrase belongs to, merged (a word may sit in two groups).
fn synonym_group(phrase: &str) -> Option<Vec<&'static str>> {
    let mut members: Vec<&'static str> = Vec::new();
    for group in ACTIONS.iter().chain(THINGS).filter(|g| g.contains(&phrase)) {
        members.extend(group.iter().copied().filter(|m| *m != phrase));
    }
    (!members.is_empty()).then_some(members)
}

fn concept(own: Vec<String>, synonyms: Vec<&'static str>) -> Concept {
    let mut terms: Vec<(String, f32)> = own.iter().map(|t| (t.clone(), 1.0)).collect();
    for synonym in synonyms {
        for term in self::terms(synonym) {
            if !terms.iter().any(|(t, _)| *t == term) {
                terms.push((term, SYNONYM_WEIGHT));
            }
        }
    }
    Concept { terms }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_at_punctuation_humps_and_paths() {
        assert_eq!(words("time__getCurrentTime"), ["time", "get", "current", "time"]);
        assert_eq!(words("read-query, SQL!"), ["read", "query", "sql"]);
        assert_eq!(words("HTTPServer/repos/{owner}"), ["http", "server", "repos", "owner"]);
        assert_eq!(words("PostInvoicesInvoiceFinalize"), ["post", "invoices", "invoice", "finalize"]);
    }

    #[test]
    fn stopwords_are_sorted_for_binary_search() {
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]), "keep STOPWORDS sorted and unique");
        assert_eq!(terms("I want to see all of the repositories"), ["see", "repositori"]);
    }

    #[test]
    fn queries_widen_to_synonyms_and_phrases() {
        let concepts = query_concepts("open a PR");
        assert_eq!(concepts.len(), 2);
        assert!(concepts[0].terms.contains(&("creat".to_owned(), SYNONYM_WEIGHT)), "{concepts:?}");
        assert!(concepts[1].terms.contains(&("pull".to_owned(), SYNONYM_WEIGHT)));
        let refund = query_concepts("give the money back");
        assert!(refund.iter().any(|c| c.terms.iter().any(|(t, _)| t == "refund")), "{refund:?}");
        assert_eq!(query_concepts("repo repo").len(), 1);
        assert_eq!(
            query_concepts("run 7302 of v2").len(),
            1,
            "values are not words: {:?}",
            query_concepts("run 7302 of v2")
        );
        let all = query_concepts("all teams");
        assert!(all[0].terms.iter().all(|(t, w)| *w == SYNONYM_WEIGHT && t != "all"), "{all:?}");
    }

    #[test]
    fn names_of_things_are_not_words_of_the_request() {
        let words = |q: &str| query_concepts(q).iter().map(|c| c.terms[0].0.clone()).collect::<Vec<_>>();
        assert_eq!(words("branches in octo/widgets"), ["branch"]);
        assert_eq!(words("download ci.yml logs, ping @maria about #42."), ["download", "log", "ping"]);
        assert!(is_value("(acme/api)") && is_value("README.md") && !is_value("repo") && !is_value("end."));
    }

    #[test]
    fn requests_for_several_steps_split_into_clauses() {
        assert_eq!(
            clauses("create a repo in my org and set up a webhook on it"),
            ["create a repo in my org", "set up a webhook on it"]
        );
        assert_eq!(clauses("fork octo/lib, fix a typo, and open a PR"), ["fork octo lib", "fix a typo", "open a pr"]);
        assert_eq!(clauses("find the run; then download its logs"), ["find the run", "download its logs"]);
        assert_eq!(clauses("salt and pepper"), ["salt and pepper"]);
    }
}
