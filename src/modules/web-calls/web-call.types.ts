import { Field, ID, ObjectType } from 'type-graphql';

@ObjectType({ description: 'A web call ready to be opened: its single-use token and the page that opens it' })
export class WebCallTicket {
  @Field(() => ID)
  agentId!: string;

  @Field({ description: 'Single-use, short-lived: what the page or the widget presents to open the call; shown once, kept only as its hash' })
  token!: string;

  @Field({ description: 'The gateway’s /talk page with the token in its fragment (never sent to a server): open it to talk to the agent' })
  url!: string;

  @Field(() => Date, { description: 'When the token stops opening a call' })
  expiresAt!: Date;
}
