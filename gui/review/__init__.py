"""Review comments on a step's work (the follow-up run is :mod:`core.run.review_comments`')."""
