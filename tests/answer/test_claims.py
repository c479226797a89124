"""What a sentence claims and the statement of a source that makes it (rag.answer.check.claims, issue 24 item 1)."""

from __future__ import annotations

import pytest

from rag.answer.check.claims import statement_gaps, statements
from rag.answer.check.no_claim import garbled


def test_statements_read_a_table_row_with_its_header_and_a_list_item_with_its_lead_in():
    text = ("Sizes of the models:\n- the small one has 24 layers\n- the large one has 80 layers\n\n"
            "| Model | Layers |\n|---|---|\n| 0.5B | 24 |\n| 72B | 80 |")
    ctx = {text[s.start:s.end]: s.context for s in statements(text)}
    assert ctx["- the small one has 24 layers"] == "Sizes of the models:\n- the small one has 24 layers"
    assert ctx["| 72B | 80 |"] == "Model: 72B; Layers: 80"  # each cell after its column's name
    assert ctx["| Model | Layers |"] == "| Model | Layers |"  # the header row is its own statement


def test_a_table_written_as_plain_lines_gives_one_statement_per_line():
    text = "Configuration 0.5B 1.5B\nHidden Size 896 1,536\n# Layers 24 28\nVocabulary Size 151,646 151,646"
    ctx = [s.context for s in statements(text)]
    assert ctx[1] == "Configuration 0.5B 1.5B\nHidden Size 896 1,536" and len(ctx) == 4


def test_wrapped_prose_stays_one_statement():
    text = "Models of all sizes employ a common\nvocabulary consisting of 151,643 regular\ntokens and 3 control tokens."
    assert [s.context for s in statements(text)] == [text]


def test_statement_gaps():
    src = "| Configuration | 0.5B | 1.5B |\n|---|---|---|\n| Hidden Size | 896 | 1,536 |\n| Vocabulary Size | 151,646 | 151,646 |"
    q = "What is the vocabulary size?"
    assert statement_gaps("The vocabulary size is 896 [1].", src, ["896"], q) == ["896"]
    assert statement_gaps("The vocabulary size is 151,646 [1].", src, ["151646"], q) == []
    assert statement_gaps("The hidden size of the 0.5B is 896 [1].", src, ["896", "0.5b"], q) == []
    assert statement_gaps("It is 151,646 [1].", src, ["151646"], q) == []  # a terse answer is read with the question
    # a specific no statement holds is a gap too
    assert statement_gaps("The vocabulary size is 32,000 [1].", src, ["32000"], q) == ["32000"]


def test_a_forms_field_is_read_with_the_forms_first_field():
    """A new user's question (2026-12-06, a grant proposal's .docx): "The total budget of the coconut rhinoceros
    beetle biological control suggestion is $331,404 [1]." was left out, "[1] holds 331404 only in a statement about
    something else": the figure's line, "Total Budget: $331,404", names no beetle; the form's first field does."""
    src = ("Suggestion Title: Coconut Rhinoceros Beetle Biological Control\n\nGoal: Goal 6 - Enhance Mitigation\n\n"
           "Total Budget: $331,404\n\nAdditional Information:\n\nThe IT component is described below.")
    ctx = {src[s.start:s.end].strip(): s.context for s in statements(src)}
    assert ctx["Total Budget: $331,404"] == "Suggestion Title: Coconut Rhinoceros Beetle Biological Control\nTotal Budget: $331,404"
    assert ctx["Additional Information:"] == "Additional Information:"  # a label with no value ends the form
    q = "What is the total budget of the coconut rhinoceros beetle biological control suggestion?"
    claim = "The total budget of the coconut rhinoceros beetle biological control suggestion is $331,404 [1]."
    assert statement_gaps(claim, src, ["331404"], q) == []
    # a form states its fields' values, not one field's value as another's
    form = "Model: Qwen2.5 0.5B\n\nHidden Size: 896\n\nVocabulary Size: 151,646"
    assert statement_gaps("The vocabulary size of Qwen2.5 0.5B is 896 [1].", form, ["896", "qwen2.5", "0.5b"],
                          "What is the vocabulary size?") == ["896"]


@pytest.mark.parametrize("sentence", [
    "In 2015, was published [1].",
    "Because of this, is used for long documents [2].",
    "Was published in 2015 by the foundation [1].",
    "The model is trained on the [1].",
    ", and the tokenizer splits words [1].",
    "and the tokenizer splits words into pieces [1].",
])
def test_garbled_sentences(sentence):
    assert garbled(sentence)


@pytest.mark.parametrize("sentence", [
    "In 2015, the guide was published [1].",
    "However, it is slower on long inputs [2].",
    "The data it was trained on comes from the web [1].",
    "Plan A costs 10 dollars and includes vitamin A [1].",
    "Longformer and Reformer use sparse attention [1].",
    "Yes, the host caches this value [1].",
    "The prefill phase processes the whole prompt at once [3].",
])
def test_sentences_that_are_statements(sentence):
    assert garbled(sentence) is None


def test_code_comments_in_speaker_notes_are_statements_of_their_own():
    """A talk's speaker notes written as "// Using CLI dotnet new web // Visual Studio File -> New Project": the
    1.5B's "From Visual Studio, you can create the app using the command line interface (CLI)" passed the check on
    them (2026-12-06), every word it adds being somewhere in the one statement they made. A URL's "//" is no cut."""
    src = ("// Using CLI dotnet new web Add a page // Visual Studio File -> New Project -> Empty ASP.NET Core web app. "
           "See https://docs.asp.net for more.")
    parts = [src[s.start:s.end].strip() for s in statements(src)]
    assert parts[:2] == ["// Using CLI dotnet new web Add a page", "// Visual Studio File -> New Project -> Empty ASP.NET Core web app."]
    assert parts[2] == "See https://docs.asp.net for more."
    q = "and what about from visual studio?"
    assert statement_gaps("From Visual Studio you use the CLI [1].", src, ["cli"], q) == ["cli"]
    assert statement_gaps("From Visual Studio you use File -> New Project [1].", src, ["file", "new", "project"], q) == []


def test_a_number_is_no_word_of_its_own_claim_and_a_row_is_read_under_its_label_row():
    # a new user's walk of the API (2026-12-06): "The total budget is $41,850 [1]." passed on a spreadsheet's
    # "| Subtotal | $41,850 |": the number's pieces "41" and "850" counted as the claim's other words
    sheet = ("| Subtotal | $166,000 |\n| FRINGE BENEFITS: |  |\n"
             "| 27% * salary for all above, except salary reimbursement for Moore | $41,850 |\n| Subtotal | $41,850 |\n"
             "| TRAVEL: |  |\n| Travel to meet collaborators | $6,000 |\n| Subtotal | $6,000 |")
    assert statement_gaps("The total budget is $41,850 [1].", sheet, ["41850"], "What is the total budget?") == ["41850"]
    # the row is read under the label row of its block: the fringe benefits are $41,850, travel $6,000
    assert statement_gaps("The fringe benefits come to $41,850 [1].", sheet, ["41850"],
                          "How much are the fringe benefits?") == []
    assert statement_gaps("Travel costs $6,000 [1].", sheet, ["6000"], "How much is travel?") == []
    assert statement_gaps("Travel costs $41,850 [1].", sheet, ["41850"], "How much is travel?") == ["41850"]


def test_an_adversarial_review_of_the_label_row_and_the_number_pieces():
    # a row with its cells left blank is no label of the rows under it
    staff = ("| Name | Department | Phone |\n|---|---|---|\n| Alice Moore | Finance | 555-0142 |\n| Bob Chen |  |  |\n"
             "| Carol Diaz | IT | 555-0199 |\n| Dan Ito | Legal | 555-0107 |")
    assert statement_gaps("Bob Chen's phone number is 555-0199 [1].", staff, ["555-0199"],
                          "What is Bob Chen's phone number?") == ["555-0199"]
    assert statement_gaps("Bob Chen works in Legal [1].", staff, ["legal"], "Which department does Bob Chen work in?") == ["legal"]
    # only the number's own pieces are dropped: "1.5B" keeps its "1" when the number is "128K"
    models = "| Model | Context |\n|---|---|\n| Qwen2.5 7B | 128K |\n| Qwen2.5 1.5B | 32K |"
    q = "What is the context length of Qwen2.5 1.5B?"
    assert statement_gaps("Qwen2.5 1.5B has a context length of 128K [1].", models, ["128k"], q) == ["128k"]
    assert statement_gaps("Qwen2.5 1.5B has a context length of 32K [1].", models, ["32k"], q) == []


def test_a_value_comes_from_the_row_the_question_names():
    # an adversarial review (2026-12-06): "Room 12 costs $120" passed on Room 11's row, the header and the row's
    # "Room" holding half the claim's words
    rooms = "| Room | Price per night |\n|---|---|\n| Room 11 | $120 |\n| Room 12 | $95 |\n| Room 14 | $150 |"
    q = "How much is Room 12 per night?"
    assert statement_gaps("Room 12 costs $120 per night [1].", rooms, ["120"], q) == ["120"]
    assert statement_gaps("Room 12 costs $95 per night [1].", rooms, ["95"], q) == []
    # a table by columns names its column in the header: every row is read with it
    models = "| Configuration | 0.5B | 1.5B |\n|---|---|---|\n| Hidden Size | 896 | 1,536 |\n| # Layers | 24 | 28 |"
    assert statement_gaps("The 0.5B model has 24 layers [1].", models, ["24"], "How many layers does the 0.5B model have?") == []


def test_a_value_comes_from_the_row_the_claim_names_in_lower_case():
    # an adversarial review (2026-12-07): "The basic plan includes 50 GB" passed on the Team row; the question's
    # "basic" is no name, so the rows named by the question's names and numbers were none
    plans = "| Plan | Storage | Users |\n|---|---|---|\n| Basic | 10 GB | 1 |\n| Team | 50 GB | 10 |"
    q = "How much storage does the basic plan include?"
    assert statement_gaps("The basic plan includes 50 GB of storage [1].", plans, ["50"], q) == ["50"]
    assert statement_gaps("The basic plan includes 10 GB of storage [1].", plans, ["10"], q) == []
    assert statement_gaps("The team plan includes 50 GB of storage [1].", plans, ["50"], q) == []
    # the header row names a column, not a row: "The DataType ID for DOUBLE is 0x28" (pdf-dev d03, the 1.5B)
    types = "| id | name | C |\n|---|---|---|\n| 0x24 | FLOAT | float |\n| 0x28 | DOUBLE | double |"
    assert statement_gaps("The DataType ID for DOUBLE is 0x28 [1].", types, ["0x28"],
                          "Which DataType ID does HDC assign to DOUBLE?") == []
    # a table by columns: the row is the asked quantity
    by_columns = "| Plan | Basic | Team |\n|---|---|---|\n| Storage | 10 GB | 50 GB |\n| Users | 1 | 10 |"
    assert statement_gaps("The team plan allows 10 users [1].", by_columns, ["10"], "How many users can the team plan have?") == []


def test_a_value_of_the_neighbouring_sentence_does_not_support_the_claim():
    # an adversarial review (2026-12-07): a sentence is read with the one before it ("It has 151,643 tokens."), which
    # let the neighbour's value through for another subject
    q = "What is the discount for students?"
    tickets = "Students receive a 20% discount. Seniors receive a 30% discount on all tickets."
    assert statement_gaps("Students receive a 30% discount [1].", tickets, ["30"], q) == ["30"]
    assert statement_gaps("Students receive a 20% discount [1].", tickets, ["20"], q) == []
    dose = "Adults may take up to 4 g per day. For children under 12 the maximum daily dose is 2 g."
    q = "What is the maximum daily dose for children?"
    assert statement_gaps("The maximum daily dose for children is 4 g [1].", dose, ["4"], q) == ["4"]
    assert statement_gaps("The maximum daily dose for children is 2 g [1].", dose, ["2"], q) == []
    plans = "The team plan includes 50 GB of storage and priority support. The basic plan includes 10 GB of storage."
    q = "How much storage does the basic plan include?"
    assert statement_gaps("The basic plan includes 50 GB of storage [1].", plans, ["50"], q) == ["50"]
    assert statement_gaps("The basic plan includes 10 GB of storage [1].", plans, ["10"], q) == []
    # a sentence that leans on the one before still says what it names; two facts of two sentences still combine
    qwen = "Qwen2.5 0.5B has a hidden size of 896. It has 151,643 tokens in its vocabulary."
    assert statement_gaps("Qwen2.5 0.5B has 151,643 tokens in its vocabulary [1].", qwen, ["151643"],
                          "How many tokens does Qwen2.5 0.5B have?") == []
    office = "The office opens at 8 am. Visitors sign in at the front desk."
    assert statement_gaps("Visitors sign in at the front desk when the office opens at 8 am [1].", office, ["8"],
                          "When do visitors sign in?") == []


def test_a_held_out_review_of_the_neighbouring_sentence_rule():
    # a second helper's probes (2026-12-07): right claims the first version withheld
    assert statement_gaps("Northwind Ltd employs 12,000 people [1].",
                          "Northwind Ltd reported revenue of $4.2 billion in 2023. The company employs 12,000 people "
                          "across 30 countries.", ["12000", "ltd"], "How many people does Northwind employ?") == []
    assert statement_gaps("Members can borrow books from 9 am, when the library opens [1].",
                          "The library opens at 9 am. Members may borrow up to 10 books at a time.", ["9"],
                          "When can members borrow books?") == []
    assert statement_gaps("The X200 router has 4 Gigabit Ethernet ports [1].",
                          "The X200 router supports Wi-Fi 6. The device has 4 Gigabit Ethernet ports.", ["4", "x200"],
                          "How many Ethernet ports does the X200 router have?") == []
