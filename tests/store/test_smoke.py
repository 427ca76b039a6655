from factory_schedule.store import open_journal


def test_a_new_journal_is_empty(tmp_path):
    journal = open_journal(f"sqlite:///{tmp_path / 'journal.db'}")
    assert journal.head("discovery/schedule") == 0
