import { Aws, Duration, RemovalPolicy } from "aws-cdk-lib";
import {
  AccountRecovery,
  FeaturePlan,
  Mfa,
  OAuthScope,
  ResourceServerScope,
  type UserPoolClient,
  UserPool,
  type UserPoolDomain,
  UserPoolResourceServer,
} from "aws-cdk-lib/aws-cognito";
import { Construct } from "constructs";
import { acknowledge } from "./nag";

export interface OAuthServerProps {
  prefix: string;
  /** Hosted domain prefix (unique per region); null: `<prefix>-<account id>`. */
  domainPrefix: string | null;
  /** Where the authorization-code client may redirect after sign-in. */
  callbackUrls: string[];
}

/** The resource server of the API and its scopes (the API does not check scopes yet; clients ask for them). */
export const RESOURCE_SERVER_ID = "browserfn";
export const SCOPES = {
  read: "functions.read",
  write: "functions.write",
  invoke: "functions.invoke",
} as const;

/**
 * The OAuth 2.0 authorization server: a Cognito user pool with a hosted domain, the
 * `browserfn` resource server and two app clients, one for machines (client credentials, with
 * a secret) and one for people (authorization code + PKCE, no secret). Users are created by
 * an operator (no self sign-up) and sign in with a TOTP second factor.
 */
export class OAuthServer extends Construct {
  readonly userPool: UserPool;
  readonly domain: UserPoolDomain;
  readonly machineClient: UserPoolClient;
  readonly webClient: UserPoolClient;

  constructor(scope: Construct, id: string, props: OAuthServerProps) {
    super(scope, id);
    this.userPool = new UserPool(this, "UserPool", {
      userPoolName: `${props.prefix}-users`,
      featurePlan: FeaturePlan.LITE,
      selfSignUpEnabled: false,
      signInAliases: { email: true },
      accountRecovery: AccountRecovery.EMAIL_ONLY,
      mfa: Mfa.REQUIRED,
      mfaSecondFactor: { otp: true, sms: false },
      passwordPolicy: {
        minLength: 12,
        requireLowercase: true,
        requireUppercase: true,
        requireDigits: true,
        requireSymbols: true,
        tempPasswordValidity: Duration.days(3),
      },
      removalPolicy: RemovalPolicy.RETAIN,
    });
    acknowledge(
      this.userPool,
      "AwsSolutions-COG8",
      "The Plus feature plan (threat protection) is billed per monthly active user; the pool mostly issues client-credentials tokens to machines, and sign-in already requires a TOTP second factor. An operator can switch the plan on without code changes.",
    );

    this.domain = this.userPool.addDomain("Domain", {
      cognitoDomain: { domainPrefix: props.domainPrefix ?? `${props.prefix}-${Aws.ACCOUNT_ID}` },
    });

    const scopes = Object.values(SCOPES).map((name) => new ResourceServerScope({ scopeName: name, scopeDescription: `browserfn ${name}` }));
    const resourceServer = new UserPoolResourceServer(this, "ResourceServer", {
      userPool: this.userPool,
      identifier: RESOURCE_SERVER_ID,
      scopes,
    });
    const apiScopes = scopes.map((scope) => OAuthScope.resourceServer(resourceServer, scope));

    this.machineClient = this.userPool.addClient("ClientCredentialsClient", {
      userPoolClientName: `${props.prefix}-machines`,
      generateSecret: true,
      oAuth: { flows: { clientCredentials: true }, scopes: apiScopes },
      accessTokenValidity: Duration.hours(1),
      enableTokenRevocation: true,
      preventUserExistenceErrors: true,
    });
    this.webClient = this.userPool.addClient("WebClient", {
      userPoolClientName: `${props.prefix}-web`,
      generateSecret: false,
      oAuth: {
        flows: { authorizationCodeGrant: true },
        scopes: [OAuthScope.OPENID, OAuthScope.EMAIL, ...apiScopes],
        callbackUrls: props.callbackUrls,
      },
      accessTokenValidity: Duration.hours(1),
      idTokenValidity: Duration.hours(1),
      refreshTokenValidity: Duration.days(30),
      enableTokenRevocation: true,
      preventUserExistenceErrors: true,
    });
    this.machineClient.node.addDependency(resourceServer);
    this.webClient.node.addDependency(resourceServer);
  }

  /** The `iss` of the pool's tokens. */
  get issuer(): string {
    return `https://cognito-idp.${Aws.REGION}.amazonaws.com/${this.userPool.userPoolId}`;
  }

  get jwksUrl(): string {
    return `${this.issuer}/.well-known/jwks.json`;
  }

  get tokenUrl(): string {
    return `${this.domain.baseUrl()}/oauth2/token`;
  }
}
