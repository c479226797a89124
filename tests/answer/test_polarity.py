"""A claim said the other way round from its source is not supported by it (issue 39: the word-level check read
"The app should store tokens in local storage [1]" as supported by "Tokens must never be stored in local storage")."""

from __future__ import annotations

from rag.answer.check.attribute import attribute, lexical_support
from rag.answer.check.polarity import claim_clauses, clauses, denied, denies, polarity_clash


def _check(question: str, sentence: str, quote: str):
    lex = lexical_support([sentence], [quote], question)
    # the document the quote comes from names what the question asks about (the SARIF technote of a walk)
    return attribute([sentence], [1], lex, question=question, quotes=[quote], places=["technote-sarif-result-matching.docx"])[0]


def test_a_claim_said_the_other_way_round_is_not_supported():
    fingerprints = "- Do populate result.partialFingerprints where possible.\n- Do not populate result.fingerprints."
    q = "What should SARIF producers do with result.fingerprints?"
    flipped = _check(q, "SARIF producers should populate result.fingerprints [1].", fingerprints)
    assert str(flipped.verdict) == "unsupported"
    assert flipped.reason == '[1] says it the other way round: "Do not populate result.fingerprints."'
    assert _check(q, "SARIF producers should not populate result.fingerprints [1].", fingerprints).passed
    q = "What should SARIF producers do with result.partialFingerprints?"
    assert _check(q, "SARIF producers should populate result.partialFingerprints where possible [1].", fingerprints).passed

    tokens = "Tokens must never be stored in local storage. Store them in an HttpOnly cookie."
    q = "Where should the app store tokens?"
    assert not _check(q, "The app should store tokens in local storage [1].", tokens).passed
    assert _check(q, "The app should store tokens in an HttpOnly cookie [1].", tokens).passed
    # the denial of another clause is not the claim's
    assert _check(q, "Tokens should be kept in an HttpOnly cookie, not in local storage [1].", tokens).passed
    assert _check("Where are tokens stored?", "Tokens are stored in memory [1].",
                  "Tokens are stored in memory, not in local storage.").passed

    q = "What happens when the alg header is none?"
    src = "The server does not validate the signature when the alg header is none."
    assert not _check(q, "The server validates the signature [1].", src).passed


def test_denials_that_are_not_the_claims_own_are_left_alone():
    # a double negative ("Don't forget to") affirms; a denied noun the claim does not name is no denial of it
    src = "Don't forget to go back to the CPU if you get a weird CUDA error at this stage."
    assert _check("How should you debug CUDA errors?", "If you get a CUDA error at this stage, go back to the CPU [1].",
                  src).passed
    src = "Using a fast tokenizer with batched=True is 30 times faster than its slow counterpart with no batching."
    assert polarity_clash("A fast tokenizer with batched=True is 30 times faster than a slow one [1].", src) is None
    # a source that does not make the claim in one clause leaves it to the word-level check
    assert polarity_clash("Rust compiles to native code [1].", "Rust is not garbage collected.") is None


def test_clauses_and_denials():
    assert clauses("Tokens are kept in memory, not in local storage") == ["Tokens are kept in memory", "not in local storage"]
    assert clauses("| 503 | Service Unavailable | unable to process. Used to retry later. |") == [
        "503", "Service Unavailable", "unable to process", "Used to retry later"]
    assert denies("does not validate") and denies("Tokens must never be stored") and denies("doesn't work")
    assert not denies("Don't forget to check") and not denies("not only X but Y") and not denies("It works")
    assert denied("must never be stored here") == {"store"}
    assert denied("does not validate the signature") == {"valid", "signatur"}
    assert denied("avoid storing tokens") == {"store", "token"}


def test_a_claim_of_another_quantity_is_not_supported():
    from rag.answer.check.polarity import quantities

    q = "Must all requirements succeed for an authorization policy to pass?"
    src = ("An authorization policy consists of one or more requirements. When a policy has several handlers for one "
           "requirement, only one handler must succeed for the requirement to pass.")
    wrong = _check(q, "All handlers must succeed for a requirement to pass [1].", src)
    assert not wrong.passed and wrong.reason.startswith('[1] says it "only one", not "all": "only one handler must succeed')
    assert _check(q, "Only one handler must succeed for a requirement to pass [1].", src).passed
    q = "When are the logs deleted?"
    assert not _check(q, "Logs are always deleted after 30 days [1].",
                      "Logs are sometimes deleted after 30 days, depending on the plan.").passed
    # the same kind in other words, or a source that says no quantity, is left to the word-level check
    assert _check(q, "All logs are deleted after 30 days [1].", "Every log is deleted after 30 days.").passed
    assert _check(q, "All logs are deleted after 30 days [1].", "Logs are deleted after 30 days.").passed
    assert quantities("sometimes one of them, and only one") == {"some": "sometimes", "one": "only one"}
    assert quantities("Each request is checked") == {"all": "each"}
    # "all" denied is "some" (a second review's probes)
    assert quantities("not every replica needs to respond") == {"some": "not every"}
    assert not _check("Do the nightly backups finish?", "All nightly backups finish before 6 am [1].",
                      "The nightly backups do not always finish before 6 am.").passed


def test_an_adversarial_review_of_the_polarity_rule():
    """A helper's review (2026-12-06) found right claims the first version vetoed and wrong ones it let through."""
    # right claims, said the same way as the source in other words: supported
    right = [
        ("Where does the app keep tokens?", "The app keeps tokens in memory, not in local storage.",
         "The app does not keep tokens in local storage [1]."),
        ("Which formats does the exporter write?", "The exporter writes CSV files but not Excel files.",
         "The exporter does not write Excel files [1]."),
        ("What happens to pinned files?", "Files are deleted after 30 days unless they are pinned.",
         "Pinned files are not deleted [1]."),
        ("When can I merge a pull request?", "You cannot merge a pull request unless all checks pass.",
         "You can merge a pull request once all checks pass [1]."),
        ("When is the cache cleared?", "The cache is not cleared until the process exits.",
         "The cache is cleared when the process exits [1]."),
        ("How many items can a batch hold?", "A batch may hold no more than 100 items.",
         "A batch can hold up to 100 items [1]."),
        ("How are failed jobs handled?", "Failed jobs aren't retried automatically; retry them from the dashboard.",
         "You can retry failed jobs from the dashboard [1]."),
        ("How do new users get an account?", "Users who do not have an account can sign up with an e-mail address.",
         "New users can sign up for an account with an e-mail address [1]."),
        ("How is Chrome run in the container?", "Chrome runs with --no-sandbox inside the container.",
         "Inside the container, Chrome's sandbox is turned off [1]."),
        ("What should developers avoid?", "Developers should avoid the following:\n- storing tokens in local storage",
         "Developers should avoid storing tokens in local storage [1]."),
        ("What characters can bucket names use?", "Use only lowercase letters in bucket names.",
         "All bucket names must use lowercase letters [1]."),
        ("How often does the job run?", "The job runs at least once a day.", "The job runs every day [1]."),
        ("Where should tokens be stored?", "You shouldn\u2019t store tokens in local storage.",
         "You shouldn't store tokens in local storage [1]."),
        ("Is data encrypted in every region?", "No matter which region you choose, data is encrypted at rest.",
         "Data is encrypted at rest in every region you choose [1]."),
        ("Is timeout required?", "| Parameter | Required | Description |\n|---|---|---|\n| timeout | No | Request timeout |",
         "The timeout parameter is not required [1]."),
        # a second review's probes (written after the rule): a semicolon ends a sentence; "only" restates a denial
        ("Which printers support manual duplex?",
         "The X100 does not support automatic duplex printing; manual duplex is supported on all models.",
         "Manual duplex printing is supported on all models [1]."),
        ("Who can create projects?", "Users who have not verified their e-mail address cannot create projects.",
         "Only users who have verified their e-mail address can create projects [1]."),
    ]
    for q, src, claim in right:
        got = _check(q, claim, src)
        assert "says it" not in got.reason, (claim, got.reason)
    # wrong claims, said the other way round: not supported
    wrong = [
        ("Where should tokens be stored?", "Never store tokens in local storage.", "Store tokens in local storage [1]."),
        ("What should SARIF producers do with result.fingerprints?", "- Do not populate result.fingerprints.",
         "Populate result.fingerprints [1]."),
        ("Where should the app store tokens?", "Don\u2019t store tokens in local storage.",
         "The app should store tokens in local storage [1]."),
        ("Does the app support SSO?", "The app does not currently support SSO login.", "The app supports SSO login [1]."),
        # a denial over a list: the whole statement is read beside its clauses
        ("Where should API keys be stored?", "Do not store passwords, tokens or API keys in the repository.",
         "Store API keys in the repository [1]."),
        ("What does the service log?", "The service does not log IP addresses or user agents.",
         "The service logs user agents [1]."),
        # a list under a lead that denies it
        ("Where should the app store tokens?", "Do not:\n- store tokens in local storage\n- log passwords",
         "The app should store tokens in local storage [1]."),
        ("Where should the app store tokens?", "Avoid the following:\n- storing tokens in local storage",
         "The app should store tokens in local storage [1]."),
    ]
    for q, src, claim in wrong:
        got = _check(q, claim, src)
        assert not got.passed and "says it the other way round" in got.reason, (claim, got.reason)


def test_a_yes_no_question_answered_no_in_its_own_words_is_a_claim_its_denying_source_supports():
    """The browser walk of 2026-12-06: "Do not install packages from unofficial mirrors." to "Should I install
    packages from unofficial mirrors?" was left out as adding no word a source holds, and the sentence after it shown."""
    rules = "Do not install packages from unofficial mirrors. Pin every dependency to an exact version."
    assert _check("Should I install packages from unofficial mirrors?",
                  "Do not install packages from unofficial mirrors [1].", rules).passed
    tokens = "Access tokens must never be stored in local storage, because any script on the page can read it."
    assert _check("Can I keep access tokens in local storage?",
                  "No, you cannot keep access tokens in local storage [1].", tokens).passed
    # a "no" the source does not say: left out
    assert not _check("Should I pin dependencies to an exact version?",
                      "No, you should not pin dependencies to an exact version [1].", rules).passed
    logs = "The service does not log passwords or session tokens. Request bodies are logged only in debug mode."
    assert not _check("Does the service log request bodies?", "No, the service does not log request bodies [1].", logs).passed
    assert _check("Does the service log passwords?", "No, the service does not log passwords [1].", logs).passed


def test_the_pronoun_i_is_no_name():
    from rag.answer.check.claims import specifics

    assert specifics("Should I populate the log, as Alice does in 2024?") == {"alice", "2024"}


def test_a_hedge_in_the_next_sentence_does_not_lift_a_denial():
    # "instead" in the sentence after the denial does not make "Never use `rm`" conditional; and a clause of purpose
    # ("To delete files, ...") is read with the clause it is the purpose of
    src = "Never use `rm` to delete files here; use `trash` instead."
    q = "How do I delete files?"
    assert not _check(q, "To delete files, use `rm` [1].", src).passed
    assert not _check(q, "Use `rm` to delete files [1].", src).passed
    assert _check(q, "To delete files, use `trash` [1].", src).passed
    assert claim_clauses("To delete files, use `rm`.") == ["To delete files, use `rm`.", "use `rm`."]
    assert claim_clauses("Files are deleted, then the cache is cleared") == ["Files are deleted", "then the cache is cleared"]
    # within its own sentence a hedge still holds: the claim is the source's contrast, not its opposite
    assert _check("Where does Memcached store data?", "Memcached stores data in memory [1].",
                  "Memcached does not store data on disk, instead in memory.").passed


def test_an_adversarial_review_of_the_purpose_clause_and_the_hedge_scope():
    # the action of a purpose clause is read on its own too: the purpose's words are not in the denying clause
    web = ("Never run `chmod -R 777` on the web root: it exposes every file. Give the web server's user ownership "
           "with `chown -R www-data /var/www` instead.")
    assert not _check("My web server says permission denied. How do I fix it?",
                      "To fix the permission denied error, run `chmod -R 777` on the web root [1].", web).passed
    update = "Do not unplug the device during the update. To recover from a failed update, hold the reset button for 10 seconds."
    assert not _check("The update failed. What now?", "To recover, unplug the device during the update [1].", update).passed
    assert _check("The update failed. What now?", "To recover, hold the reset button for 10 seconds [1].", update).passed
    assert not _check("How do I free disk space?", "In order to free disk space, you should delete the cache folder [1].",
                      "Never delete the cache folder to free disk space.").passed
    # a hedge in the sentence before a denial does not lift it
    assert not _check("How do I clean the sensor?", "Clean the sensor with alcohol [1].",
                      "Only use the supplied brush. Do not clean the sensor with alcohol.").passed
    assert not _check("How do I push my change?", "Force-push to main [1].",
                      "If the build fails, read the log first. Never force-push to main.").passed


#: An adversarial review of the claim check (2026-12-07): wrong claims a small model writes by swapping one word for
#: its opposite, the value of a quantity for another, or a unit; each was shown as supported.
SWAPPED = [
    ("What is the maximum request timeout?", "The default request timeout is 30 seconds, and the maximum is 300 seconds.",
     "The maximum request timeout is 30 seconds [1].", '"default", not "maximum"'),
    ("What is the minimum password length?", "Passwords must be at least 12 characters long and at most 64 characters.",
     "The minimum password length is 64 characters [1].", '"maximum", not "minimum"'),
    ("Does caching increase latency?", "Caching reduces latency for repeated reads but increases memory usage.",
     "Caching increases latency for repeated reads [1].", '"reduces", not "increases"'),
    ("What happened to revenue in 2023?", "In 2023 revenue fell 12% while operating costs rose 5%.",
     "In 2023 revenue rose 12% [1].", '"fell", not "rose"'),
    ("How many users can the basic plan have?",
     "The basic plan supports fewer than 5 users. The team plan supports more than 50 users.",
     "The basic plan supports more than 5 users [1].", '"fewer", not "more"'),
    ("When should I run the database migrations?",
     "Run the database migrations before starting the application server. Run the smoke tests after starting it.",
     "Run the database migrations after starting the application server [1].", '"before", not "after"'),
    ("Is two-factor authentication required for administrators?",
     "Two-factor authentication is required for administrators and optional for regular users.",
     "Two-factor authentication is optional for administrators [1].", '"required", not "optional"'),
    ("How long is parental leave?", "Parental leave is 12 weeks at full pay.",
     "Parental leave is 12 days at full pay [1].", '"weeks", not "days"'),
    ("Does the free tier include API access?",
     "The free tier excludes API access. API access is included in the paid tiers.",
     "The free tier includes API access [1].", '"excludes", not "includes"'),
]

#: Right claims beside the same words: none may be vetoed (each passed before the rule, and passes with it).
KEPT = [
    ("Does caching affect memory?", "Caching reduces latency for repeated reads but increases memory usage.",
     "Caching increases memory usage [1]."),
    ("What is the maximum request timeout?", "The default request timeout is 30 seconds, and the maximum is 300 seconds.",
     "The maximum request timeout is 300 seconds [1]."),
    ("What is the default timeout?", "The default request timeout is 30 seconds, and the maximum is 300 seconds.",
     "The default request timeout is 30 seconds [1]."),
    ("How long can passwords be?", "Passwords must be at least 12 characters long and at most 64 characters.",
     "Passwords can be up to 64 characters long [1]."),
    ("When do I run migrations?", "Run the database migrations before starting the application server.",
     "Migrations must run before the server starts [1]."),
    ("How long is the warranty?", "The warranty lasts 2 years, or 24 months, from the date of purchase.",
     "The warranty lasts 24 months [1]."),
    ("Does it use less memory?", "The new engine uses fewer resources and less memory than the old one.",
     "The new engine uses less memory than the old one [1]."),
    ("Who must use 2FA?", "Two-factor authentication is required for administrators and optional for regular users.",
     "Two-factor authentication is optional for regular users [1]."),
    ("What do higher temperature values do?", "Lower values make the output more focused; higher values make it more diverse.",
     "Higher temperature values make the output more diverse [1]."),
    ("Does the free plan include API access?", "The free plan does not include API access.",
     "No, the free plan does not include API access [1]."),
    ("What happens to requests over the limit?",
     "Requests above the limit are rejected with 429; requests below it are accepted.",
     "Requests above the limit are rejected with a 429 status [1]."),
    ("How often are backups made?", "Backups run every 6 hours and are kept for 30 days.",
     "Backups run every 6 hours and are kept for 30 days [1]."),
    ("Is the API synchronous?", "The API is asynchronous: calls return a job id at once.", "No, the API is asynchronous [1]."),
    ("When was the bridge opened?", "The bridge was closed in 2019 and opened again in 2021 after repairs.",
     "The bridge opened again in 2021 [1]."),
]


def test_a_claim_with_one_word_swapped_for_its_opposite_is_not_supported():
    for q, src, sentence, how in SWAPPED:
        r = _check(q, sentence, src)
        assert str(r.verdict) == "unsupported", sentence
        assert r.reason.startswith(f"[1] says it {how}: "), (sentence, r.reason)
    for q, src, sentence in KEPT:
        assert _check(q, sentence, src).passed, sentence


def test_a_denial_of_one_word_is_what_its_opposite_says():
    # an adversarial review (2026-12-07): the 0.5B's right "No, caching does not increase latency for repeated reads"
    # was left out as said the other way round, against "Caching reduces latency ... but increases memory usage"
    src = "Caching reduces latency for repeated reads but increases memory usage."
    assert _check("Does caching increase latency?", "No, caching does not increase latency for repeated reads [1].",
                  src).passed
    assert not _check("Does caching reduce latency?", "No, caching does not reduce latency for repeated reads [1].",
                      src).passed
    assert not _check("Does caching affect memory?", "Caching does not increase memory usage [1].", src).passed
    assert _check("Does the free tier include API access?",
                  "The free tier does not include API access for developers [1].",
                  "The free tier excludes API access for developers.").passed


def test_a_held_out_review_of_the_opposites_rule():
    """A second helper's 120 probes (2026-12-07), written without seeing the first review's: its right claims that
    the first version of the rule withheld, and wrong ones it missed."""
    kept = [
        ("Which backend is faster?", "The SQLite backend is slower than the PostgreSQL backend for concurrent writes.",
         "The PostgreSQL backend is faster than the SQLite backend for concurrent writes [1]."),
        ("When were costs higher?", "Operating costs in 2023 were lower than in 2022.",
         "Operating costs were higher in 2022 than in 2023 [1]."),
        ("Which model is larger?", "The distilled model is 40% smaller than the teacher model.",
         "The teacher model is larger than the distilled model [1]."),
        ("When do I start mixing?", "Preheat the oven to 180 °C before you start mixing the batter.",
         "Start mixing the batter after preheating the oven to 180 °C [1]."),
    ]
    for q, src, sentence in kept:
        assert _check(q, sentence, src).passed, sentence
    caught = [
        ("How long to bake?", "Bake for at least 40 minutes, until a skewer comes out clean.",
         "Bake for up to 40 minutes, until a skewer comes out clean [1]."),
        ("Is subletting allowed?", "Subletting the apartment is prohibited.", "Subletting the apartment is permitted [1]."),
        ("How should the soup be served?", "Serve the soup cold, garnished with dill.",
         "Serve the soup hot, garnished with dill [1]."),
        ("How much syrup for children?", "Give children 5 ml of the syrup every 6 hours.",
         "Give children 5 mg of the syrup every 6 hours [1]."),
        ("What is the maximum dose?", "The usual dose is 250 mg twice daily; do not exceed 1,000 mg a day.",
         "The maximum dose is 250 mg twice daily [1]."),
    ]
    for q, src, sentence in caught:
        assert not _check(q, sentence, src).passed, sentence
    assert _check("What is the usual dose?", "The usual dose is 250 mg twice daily [1].",
                  "The usual dose is 250 mg twice daily; do not exceed 1,000 mg a day.").passed
