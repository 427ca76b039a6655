"""The dashboard's modal screens: the forms that record a commission, a sign-in or a dead runner."""
