"""The owner's Textual dashboard: the app, its views (widgets), its modal screens and the reading they draw."""
