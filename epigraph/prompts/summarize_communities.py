"""summarize_communities (json): a short name and a summary for each of several communities of entities.

A community is a cluster the clustering found among the current facts (``overview.clusters``); the model
sees its best connected members with their own summaries (each cut short) and how many others it has,
never the facts themselves. All the communities of an update that need a summary go in one call (chunked
by ``OverviewOptions.community_batch``), so an update after an episode costs at most one call.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from .base import OutputShape, Prompt, ShortName


class Member(BaseModel):
    name: str
    summary: str


class CommunityMembers(BaseModel):
    id: str
    members: list[Member] = Field(min_length=1)
    others: int = 0
    """Members not shown (the community's less connected ones)."""


class SummarizeCommunitiesInput(BaseModel):
    communities: list[CommunityMembers] = Field(min_length=1)


class CommunitySummary(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: str
    name: ShortName
    summary: str = Field(max_length=1200)


class SummarizeCommunitiesOutput(BaseModel):
    model_config = ConfigDict(extra="ignore")

    communities: list[CommunitySummary] = Field(default_factory=list)


EXAMPLE = SummarizeCommunitiesInput(
    communities=[
        CommunityMembers(
            id="1",
            members=[
                Member(name="Alice", summary="Alice lives in Berlin and works at Globex."),
                Member(name="Globex", summary="Globex is a software company in Berlin."),
                Member(name="Berlin", summary="Berlin is where Alice lives."),
            ],
            others=2,
        )
    ]
)

PROMPT: Prompt[SummarizeCommunitiesInput, SummarizeCommunitiesOutput] = Prompt(
    name="summarize_communities",
    version="1",
    input_model=SummarizeCommunitiesInput,
    output_model=SummarizeCommunitiesOutput,
    response_type="json",
    example=EXAMPLE,
    small=True,
    # An id, a name of a few words and at most three sentences (under 80 words) per community.
    shape=OutputShape(per_item=170, items=lambda d: len(d.communities), base=24),
)
