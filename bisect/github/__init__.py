"""Reporting to GitHub: the client (a comment per issue and case, edited in place, and run
artifacts), the bisect comment and the bot that runs the commands a comment asks for."""
