"""``--report DIR``: what a person reads after a replay.

``capture`` takes the pictures and logs during the run (a hook of ``trailrun``: a screenshot
after each step and at the failure, the trail's logcat slice, its screen recording), ``html``
and ``markdown`` render the run and what was captured, ``output`` writes them into DIR. Every
text they show goes through ``text.shown`` first.
"""
